"""The script ``curate ui`` serves: it runs ``annotation_ui/app.py``.

It lives in a folder without a ``pages/`` subfolder on purpose. Next to a ``pages/`` folder, Streamlit starts
in its old multipage mode, which runs a page script alone (no navigation, no sign-in, no guard) when the very
first request after a server start is a deep link such as ``/dashboard``; from here every request goes through
the app's own navigation.
"""

import runpy
from pathlib import Path

runpy.run_path(str(Path(__file__).resolve().parents[1] / "app.py"), run_name="__main__")
