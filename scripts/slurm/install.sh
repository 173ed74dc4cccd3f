#!/usr/bin/env bash
# Installs Debian's slurm-wlm and munge (bookworm: Slurm 22.05) unless both are already
# installed. Idempotent; needs root. Usage: scripts/slurm/install.sh
set -euo pipefail
pkgs=(slurm-wlm munge)
missing=()
for p in "${pkgs[@]}"; do
  # dpkg -s succeeds for removed-but-configured packages too, so check the status line.
  if ! dpkg -s "$p" 2>/dev/null | grep -q '^Status: install ok installed'; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} == 0)); then
  echo "install.sh: ${pkgs[*]} already installed"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install.sh: installed ${missing[*]}"
