#!/usr/bin/env bash
# Install a minimal single-node SLURM (Debian packages) for the test suite.
#
# Idempotent: does nothing when the needed binaries are already present.
# The daemons are NOT started or enabled here; tests/slurm_cluster.py starts
# private instances (own config, ports, munge socket) in a temp directory.
set -euo pipefail

PACKAGES=(slurmctld slurmd slurm-client munge)
BINARIES=(slurmctld slurmd munged sbatch squeue scontrol sinfo)

missing=0
for b in "${BINARIES[@]}"; do
    if ! command -v "$b" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$b" ]; then
        missing=1
    fi
done
if [ "$missing" -eq 0 ]; then
    echo "install-slurm: slurm and munge already installed, nothing to do"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi

export DEBIAN_FRONTEND=noninteractive

# Keep the package maintainer scripts from trying to start the system
# services (no init system in containers; we run our own instances anyway).
policy=/usr/sbin/policy-rc.d
created_policy=0
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
    $SUDO chmod 755 "$policy"
    created_policy=1
fi
cleanup() {
    if [ "$created_policy" -eq 1 ]; then
        $SUDO rm -f "$policy"
    fi
}
trap cleanup EXIT

$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${PACKAGES[@]}"

for b in "${BINARIES[@]}"; do
    command -v "$b" >/dev/null 2>&1 || [ -x "/usr/sbin/$b" ] || {
        echo "install-slurm: $b still missing after install" >&2
        exit 1
    }
done
echo "install-slurm: installed $(/usr/sbin/slurmctld -V 2>/dev/null || echo slurm)"
