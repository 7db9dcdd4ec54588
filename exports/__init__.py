"""Versioned releases: deterministic snapshots of the admitted items (imports ``curation``, never the reverse).

``build`` gates and writes a release, ``gates`` is the hook registry the build re-runs, ``snapshot`` reads the
workspace, ``writer`` hashes every file while writing it, ``card`` writes README.md and croissant.json,
``stats`` the composition and random baselines, ``fingerprints`` the manifest's text hashes and MinHash
sketches, ``verify`` checks and compares release folders.
"""
