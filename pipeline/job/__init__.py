"""The main job: ladder, tuning, calibration, export and report as one resumable run.

Owns the job driver, the cross-section config checks, profile export and the run report. May
import every stage package; no stage package imports it.
"""
