"""Running a tool for the deploy tests (run.py and refusals.py): its output, and an
AssertionError naming the command when it fails and `check` is set."""

import os
import subprocess


def run(*args, cwd=None, check=True, env=None):
    r = subprocess.run(list(args), cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env={**os.environ, **(env or {})})
    if check and r.returncode != 0:
        raise AssertionError(f"{' '.join(args)} exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
    return r
