"""Self-play, rating, tuning and calibration pipeline built on the engine."""
