"""Audio production (TRIAD App. B.1-B.5): speakers and their consent, takes and the producer's choice, the
independent listener's spot check, and the recording controls of audio-perturbed groups.

Modules: ``credits`` (who made a clip, from its provenance), ``tables`` (the records), ``records`` (storing
them), ``gates`` (the gates they feed), ``spot_check`` (the sample), ``claims`` (what a release may state).
"""
