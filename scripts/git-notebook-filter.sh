#!/usr/bin/env bash
# Install the nbstripout git filter for this checkout: notebooks saved from
# JupyterLab (outputs, execution counts) are stored stripped, so running a
# notebook and saving it leaves `git status` clean. The kernelspec keeps its
# display_name ("Python 3 (ipykernel)", as JupyterLab writes it): nbformat's
# schema requires it, so stripping it would commit invalid notebooks.
# Called by setup.sh; safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || exit 0
PY="$PWD/.venv/bin/python"
git config filter.nbstripout.clean "'$PY' -m nbstripout"
git config filter.nbstripout.smudge cat
git config filter.nbstripout.extrakeys \
  "metadata.language_info cell.metadata.execution cell.metadata.jp-MarkdownHeadingCollapsed"
git config diff.ipynb.textconv "'$PY' -m nbstripout -t"
