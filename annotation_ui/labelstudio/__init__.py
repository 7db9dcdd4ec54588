"""The Label Studio bridge: review stages, query screening, rating campaigns, the story study and judge samples
pushed to a Label Studio server and pulled back, each a declaration on one engine (``engine.py``).

Label Studio accepts any result for any task; everything pulled is validated here against the project's
rules before it reaches the workspace, through the same code path as the app's pages and ``curate import``.
"""
