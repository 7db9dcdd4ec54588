"""The Label Studio bridge: review stages and rating campaigns pushed to a Label Studio server and pulled back.

Label Studio accepts any result for any task; everything pulled is validated here against the stage's
rules before it reaches the workspace, through the same code path as ``curate import reviews``.
"""
