#!/bin/bash
# After `python -m pipeline run configs/runs/VARIANT.toml --output runs` has finished:
# export the profile, write the run report, run the independent level check and gather the
# experiment folder.
#   experiments/calibration/finish.sh VARIANT BASELINE_PROFILE CHECK_SEED [PAIRS] [BASELINE_PAIRS]
set -euo pipefail
variant=$1 baseline=$2 seed=$3 pairs=${4:-150} baseline_pairs=${5:-20}
config=${CONFIG:-configs/runs/$variant.toml}
out=experiments/2026-11-29-$variant-calibration
run_id=$(python -c "
from pipeline.job.main_job import JobOptions, load_job_config
print(load_job_config('$config', JobOptions()).run_id)")
run=runs/$run_id
test -f "$run/calibrate/result.json" || { echo "no finished calibration in $run" >&2; exit 1; }
python -m pipeline export "$run_id" --output runs --profiles-dir engine/profiles \
    --description "Calibrated by $out/ (run $run_id, config $config)"
python -m pipeline report "$run_id" --output runs > /dev/null
python -m pipeline levelcheck "engine/profiles/$variant.json" --output "runs/checks/$variant" \
    --baseline "$baseline" --pairs "$pairs" --baseline-pairs "$baseline_pairs" --seed "$seed" \
    --deck-part odd --ply-cap "$(python -c "
from pipeline.config.job_sections import job
from pipeline.job.main_job import JobOptions, load_job_config
print(job(load_job_config('$config', JobOptions())).ply_cap)")"
python experiments/calibration/collect.py --config "$config" --run "$run" --check "runs/checks/$variant" --out "$out"
