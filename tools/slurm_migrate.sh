#!/usr/bin/env bash
# Migrates a job over every GPU of the nodes Slurm gives it: one rank per GPU.
#   sbatch --nodes=2 tools/slurm_migrate.sh job.ini [--option value ...]
# The job folder (output.job in the INI) must be on storage that every node sees. Run the
# same sbatch again after an interruption (a time limit, a node failure): it resumes.
#SBATCH --job-name=rtm-migrate
#SBATCH --nodes=1
#SBATCH --gpus-per-node=4
#SBATCH --ntasks-per-node=4
#SBATCH --cpus-per-task=8
#SBATCH --time=24:00:00
#SBATCH --output=rtm-migrate-%j.log
#SBATCH --signal=TERM@300
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: sbatch tools/slurm_migrate.sh JOB.ini [--option value ...]" >&2; exit 2; }
config=$1
shift
cd "${SLURM_SUBMIT_DIR:-.}"
# SIGTERM 5 minutes before the time limit (--signal above): every rank finishes its
# shot, the stack is committed and the image written; exit 143 tells to resubmit.
export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK:-1}
exec srun --kill-on-bad-exit=1 build/rtm migrate --config "$config" "$@"
