"""Tracking: MLflow runs of a job (``mlflow_log``: the only module that imports mlflow) and the
PNG plots the runs and the report attach. ``python -m pipeline.tracking replay LOG`` re-logs a
run's local event log. Imports nothing of the pipeline.
"""
