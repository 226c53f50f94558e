"""Match records: JSON lines of deals, plays and payoffs, and decisions read back from them.

``record`` (write, read and replay records) and ``dataset`` (records as observation, legal ids
and action arrays for supervised learning). Builds on the rules and the engine.
"""
