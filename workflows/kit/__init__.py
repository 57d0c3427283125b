"""Pure functions over the shapes: what both sides of the workflow boundary compute alike.

Citations resolved and escaped, cited sentences verified and summed up, the calibrated judge,
evidence passages, scholarly works merged, a follow-up's referent (and the ordinals the offline
engine reads too), routing's first two layers, findings and sources matched across runs, a
report's numbered sections. Deterministic and free of workflow calls, so the activities, the
starter and the stages above share one copy.
"""
