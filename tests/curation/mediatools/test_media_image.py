"""Image normalization: orientation, RGB, size cap, metadata stripped, idempotence, refusals."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from curation.config import MediaSettings
from curation.errors import MediaError
from curation.mediatools import check_image, normalize_image
from curation.mediatools.image import _jpeg_markers
from tests.synthetic_media import encode_image, scene

SETTINGS = MediaSettings()


def exif_with_gps(orientation: int) -> bytes:
    exif = Image.Exif()
    exif[0x0112] = orientation
    exif[0x010F] = "PhoneMaker"
    exif.get_ifd(0x8825).update({1: "N", 2: (51.0, 30.0, 0.0), 3: "W", 4: (0.0, 7.0, 0.0)})
    return exif.tobytes()


def test_orientation_is_applied_then_metadata_stripped() -> None:
    picture = Image.new("RGB", (1600, 1200), "blue")
    picture.paste((255, 0, 0), (0, 0, 400, 300))  # red in the top-left corner as stored
    data = encode_image(picture, "JPEG", quality=95, exif=exif_with_gps(6), comment=b"secret")
    assert "media:metadata" in check_image(data, "phone.jpg", SETTINGS).reasons
    result = normalize_image(data, "phone.jpg", SETTINGS)
    out = Image.open(io.BytesIO(result.data))
    assert out.format == "JPEG" and out.mode == "RGB"
    assert out.size == (768, 1024)  # rotated upright (orientation 6), longest edge capped
    red, green, blue = out.convert("RGB").getpixel((out.width - 20, 20))
    assert red > 200 and blue < 60  # the stored top-left corner is now top-right
    assert dict(out.getexif()) == {}
    assert "comment" not in out.info and "icc_profile" not in out.info
    markers = _jpeg_markers(result.data)
    assert markers is not None and not [m for m in markers if 0xE1 <= m <= 0xEF or m == 0xFE]
    assert b"PhoneMaker" not in result.data
    assert result.params["oriented"] is True and result.params["resized"] is True
    assert check_image(result.data, "phone.jpg", SETTINGS).reasons == []


def test_png_with_alpha_becomes_rgb_jpeg_on_white() -> None:
    rgba = Image.new("RGBA", (300, 200), (0, 0, 0, 0))
    rgba.paste((0, 128, 0, 255), (0, 0, 150, 200))
    result = normalize_image(encode_image(rgba, "PNG"), "logo.png", SETTINGS)
    out = Image.open(io.BytesIO(result.data))
    assert (out.format, out.mode, out.size) == ("JPEG", "RGB", (300, 200))
    assert min(out.getpixel((250, 100))) > 240  # transparent area is white, not black
    assert out.getpixel((50, 100))[1] > 100


@pytest.mark.parametrize("fmt", ["PNG", "JPEG"])
def test_normalizing_twice_returns_identical_bytes(fmt: str) -> None:
    data = encode_image(scene(1, (1500, 900)), fmt)
    once = normalize_image(data, "a", SETTINGS)
    twice = normalize_image(once.data, "a", SETTINGS)
    assert twice.data == once.data and twice.unchanged and not once.unchanged


def test_check_names_each_problem() -> None:
    big = encode_image(scene(2, (1300, 500)), "JPEG", quality=90)
    assert check_image(big, "big.jpg", SETTINGS).reasons == ["media:size"]
    low_quality = encode_image(scene(2, (500, 300)), "JPEG", quality=60)
    assert check_image(low_quality, "q.jpg", SETTINGS).reasons == ["media:format"]
    png = encode_image(scene(2, (500, 300)), "PNG")
    assert check_image(png, "p.png", SETTINGS).reasons == ["media:format"]
    progressive = encode_image(scene(2, (500, 300)), "JPEG", quality=90, progressive=True)
    assert check_image(progressive, "pr.jpg", SETTINGS).reasons == ["media:format"]


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b"", "empty"),
        (b"\x89PNG\r\n\x1a\n not really a png", "not a readable image"),
        (encode_image(scene(3, (400, 300)), "JPEG")[:900], "corrupt"),
    ],
)
def test_bad_images_are_refused_naming_the_file(data: bytes, fragment: str) -> None:
    with pytest.raises(MediaError, match=fragment) as caught:
        normalize_image(data, "cover_3.jpg", SETTINGS)
    assert "cover_3.jpg" in str(caught.value)
    assert check_image(data, "cover_3.jpg", SETTINGS).reasons == ["media:format"]


def test_oversized_images_are_refused() -> None:
    bomb_limit = SETTINGS.model_copy(update={"max_image_pixels": 10_000})
    data = encode_image(Image.new("RGB", (200, 200)), "PNG")
    with pytest.raises(MediaError, match=r"huge\.png: 200x200 pixels is over the limit"):
        normalize_image(data, "huge.png", bomb_limit)
    assert check_image(data, "huge.png", bomb_limit).reasons == ["media:size"]
    byte_limit = SETTINGS.model_copy(update={"max_file_mb": 0.0001})
    with pytest.raises(MediaError, match=r"heavy\.png: the file is"):
        normalize_image(data, "heavy.png", byte_limit)
