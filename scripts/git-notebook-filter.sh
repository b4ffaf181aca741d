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
# stripped content is unchanged, so `git status` stays clean (tools/notebook_git.py,
# repository tooling outside the package: loaded by its path from the venv's Python
# server config; a hook an older setup registered in the JSON config is removed).
if [ -x .venv/bin/python ]; then
  .venv/bin/python - <<'PY'
import json, pathlib
folder = pathlib.Path(".venv/etc/jupyter")
folder.mkdir(parents=True, exist_ok=True)
as_json = folder / "jupyter_server_config.json"
config = json.loads(as_json.read_text()) if as_json.is_file() else {}
manager = config.get("FileContentsManager", {})
if str(manager.get("post_save_hook", "")).startswith("facetlab."):
    del manager["post_save_hook"]
    as_json.write_text(json.dumps(config, indent=2) + "\n")
marker = "# written by scripts/git-notebook-filter.sh"
as_py = folder / "jupyter_server_config.py"
if as_py.is_file() and not as_py.read_text().startswith(marker):
    raise SystemExit(f"{as_py} is your own: add tools/notebook_git.py's refresh_git_stat to it")
hook = pathlib.Path("tools/notebook_git.py").resolve()
as_py.write_text(
    f"{marker}: keep `git status` clean after a save\n"
    "import importlib.util as _util\n"
    f"_spec = _util.spec_from_file_location('facetlab_notebook_git', {str(hook)!r})\n"
    "_hook = _util.module_from_spec(_spec)\n"
    "_spec.loader.exec_module(_hook)\n"
    "c.FileContentsManager.post_save_hook = _hook.refresh_git_stat\n"
)
PY
fi
