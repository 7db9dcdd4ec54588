"""Regenerate the demo's images (Pillow) and speech (espeak-ng with hand-set SSML prosody).

Developer tool: the outputs are committed under omnicurate/demo/data/media so the demo needs neither.
Run: python scripts/make_demo_media.py
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import numpy as np
import soundfile as sf
from PIL import Image, ImageDraw

OUT = Path(__file__).resolve().parents[1] / "omnicurate" / "demo" / "data" / "media"
W, H = 320, 240


def person(d: ImageDraw.ImageDraw, x: int, y: int, mood: str, colour: str) -> None:
    d.ellipse((x - 22, y - 22, x + 22, y + 22), fill="#f2c9a0", outline="black", width=2)
    d.rectangle((x - 26, y + 26, x + 26, y + 90), fill=colour, outline="black", width=2)
    d.ellipse((x - 10, y - 8, x - 4, y - 2), fill="black")
    d.ellipse((x + 4, y - 8, x + 10, y - 2), fill="black")
    if mood == "smile":
        d.arc((x - 12, y - 4, x + 12, y + 14), 20, 160, fill="black", width=2)
    elif mood == "eyeroll":
        d.ellipse((x - 10, y - 12, x - 4, y - 6), fill="white", outline="black")
        d.ellipse((x + 4, y - 12, x + 10, y - 6), fill="white", outline="black")
        d.line((x - 10, y + 8, x + 10, y + 8), fill="black", width=2)
    else:
        d.line((x - 10, y + 8, x + 10, y + 8), fill="black", width=2)


def kitchen(mood: str) -> Image.Image:
    img = Image.new("RGB", (W, H), "#fdf6e3")
    d = ImageDraw.Draw(img)
    d.rectangle((40, 150, 280, 170), fill="#8b5a2b")
    for i in range(4):
        d.rectangle((130 + i * 14, 138 - i * 3, 150 + i * 14, 150), fill="#3b2a1a")
    person(d, 80, 70, mood, "#4477aa")
    person(d, 240, 70, "neutral", "#aa7744")
    return img


def door(direction: str) -> Image.Image:
    img = Image.new("RGB", (W, H), "#e8eef2")
    d = ImageDraw.Draw(img)
    d.rectangle((110, 30, 210, 220), outline="black", width=3)
    d.polygon([(110, 30), (170, 50), (170, 200), (110, 220)], fill="#b5651d", outline="black")
    if direction == "closing":
        d.line((230, 120, 180, 120), fill="red", width=5)
        d.polygon([(180, 110), (165, 120), (180, 130)], fill="red")
    else:
        d.line((180, 120, 230, 120), fill="green", width=5)
        d.polygon([(230, 110), (245, 120), (230, 130)], fill="green")
    return img


def traffic(light: str) -> Image.Image:
    img = Image.new("RGB", (W, H), "#cfd8dc")
    d = ImageDraw.Draw(img)
    d.rectangle((135, 20, 185, 170), fill="#222222")
    d.line((160, 170, 160, 230), fill="#444444", width=8)
    for i, colour in enumerate(("red", "orange", "green")):
        on = colour == light
        d.ellipse((145, 30 + i * 45, 175, 60 + i * 45), fill=colour if on else "#555555")
    return img


def riverside(building: bool) -> Image.Image:
    img = Image.new("RGB", (W, H), "#bfe3ff")
    d = ImageDraw.Draw(img)
    d.rectangle((0, 150, W, H), fill="#2f6ea8")
    d.polygon([(0, 150), (120, 120), (200, 150)], fill="#5c8a3a")
    d.polygon([(60, 150), (90, 140), (110, 150)], fill="#6b4f2a")
    if building:
        d.rectangle((220, 60, 300, 150), fill="#dddddd", outline="black")
        for i in range(4):
            d.rectangle((228 + i * 18, 70, 238 + i * 18, 140), fill="#999999")
    return img


def speak(text: str, path: Path, *, pitch: int = 50, speed: int = 160, voice: str = "en-us") -> None:
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "raw.wav"
        subprocess.run(
            ["espeak-ng", "-m", "-v", voice, "-p", str(pitch), "-s", str(speed), "-w", str(raw), text],
            check=True,
        )
        data, rate = sf.read(raw, dtype="float32")
        # 16 kHz keeps the demo small; `curate media normalize` makes the 48 kHz derivatives.
        n = int(len(data) * 16000 / rate)
        resampled = np.interp(np.linspace(0, len(data) - 1, n), np.arange(len(data)), data)
        sf.write(path, resampled.astype(np.float32), 16000, subtype="PCM_16")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, img in {
        "kitchen_smile.jpg": kitchen("smile"),
        "kitchen_neutral.jpg": kitchen("neutral"),
        "door_closing.jpg": door("closing"),
        "door_opening.jpg": door("opening"),
        "traffic_red.jpg": traffic("red"),
        "traffic_green.jpg": traffic("green"),
        "river_plain.jpg": riverside(False),
        "river_building.jpg": riverside(True),
    }.items():
        img.save(OUT / name, "JPEG", quality=85)
    line = "Sure, that was a really helpful suggestion."
    speak(f"<speak><prosody pitch='+10%' rate='95%'>{line}</prosody></speak>", OUT / "kitchen_sincere.wav")
    speak(
        "<speak><prosody rate='70%' pitch='-20%'>Sure, <emphasis level='strong'>that</emphasis> was a "
        "<emphasis level='strong'>really</emphasis> helpful suggestion.</prosody></speak>",
        OUT / "kitchen_sarcastic.wav",
        pitch=35,
    )
    for word in ("she", "stole", "money"):
        text = " ".join(
            f"<emphasis level='strong'>{w}</emphasis>" if w.strip(".").lower() == word else w
            for w in ["I", "didn't", "say", "she", "stole", "the", "money."]
        )
        speak(f"<speak>{text}</speak>", OUT / f"stress_{word}.wav")
    speak("<speak>Quick, <break time='200ms'/> the wind is picking up.</speak>", OUT / "door_wind.wav", speed=175)
    speak("<speak>Okay. <break time='300ms'/> Wait for it.</speak>", OUT / "traffic_wait.wav")
    speak("<speak>He said it is just over there.</speak>", OUT / "bank_there.wav")
    speak("It is just over there.", OUT / "bank_plain_tts.wav")


if __name__ == "__main__":
    main()
