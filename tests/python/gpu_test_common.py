"""What the Python GPU tests share: running one configuration in its own subprocess (an
allocator can be switched only before the first CUDA allocation), formatting, and the end of a
comparison run."""
import json
import os
import subprocess
import sys


def run_worker(script: str, worker_args: list, env: dict = None, **identity) -> dict:
    """Runs ``script --worker worker_args...`` and returns the JSON it printed on its ``RESULT``
    line, or ``identity`` with an ``error`` (exit code and the output's tail)."""
    cmd = [sys.executable, os.path.abspath(script), "--worker", *map(str, worker_args)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    tail = (proc.stdout + proc.stderr)[-3000:]
    return {**identity, "error": f"exit {proc.returncode}: {tail}"}


def print_result(result: dict) -> None:
    """A worker's output: one ``RESULT`` line with its JSON."""
    print("RESULT " + json.dumps(result), flush=True)


def mib(value) -> str:
    """Bytes as MiB for a table, or ``-`` when unknown."""
    return "-" if value is None else f"{value / 2**20:,.0f}"


def finish(what: str, rtol: float, failed: bool, results: list, json_path: str) -> int:
    """Prints the verdict line, writes every result to ``json_path`` (if given), returns the exit
    code (1 on a mismatch or a failed run)."""
    print(f"\n{what} compared with relative tolerance {rtol:g}; "
          f"{'FAILED' if failed else 'all ok'}")
    if json_path:
        with open(json_path, "w") as f:
            json.dump(results, f, indent=1)
    return 1 if failed else 0
