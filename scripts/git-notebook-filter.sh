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

# JupyterLab from this .venv refreshes git's record of a saved, tracked notebook whose
# stripped content is unchanged, so `git status` stays clean (facetlab/notebook_git.py).
# Merged into the venv's own server config (other settings there are kept).
if [ -x .venv/bin/python ]; then
  .venv/bin/python - <<'PY'
import json, pathlib
path = pathlib.Path(".venv/etc/jupyter/jupyter_server_config.json")
path.parent.mkdir(parents=True, exist_ok=True)
config = json.loads(path.read_text()) if path.is_file() else {}
config.setdefault("FileContentsManager", {})["post_save_hook"] = (
    "facetlab.notebook_git.refresh_git_stat"
)
path.write_text(json.dumps(config, indent=2) + "\n")
PY
fi
