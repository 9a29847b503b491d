"""echo-load runs and their JSON."""
import json
import subprocess

from lib.cpu import pinned


class LoadFailed(RuntimeError):
    pass


def command(exe, port, args, cpus=None):
    """echo-load against 127.0.0.1:port with args (its flags besides --port), JSON out."""
    return pinned([exe, "--port", port, *args, "--json"], cpus)


def parse(out):
    """echo-load's JSON object from its standard output, or None."""
    try:
        return json.loads(out) if out and out.lstrip().startswith("{") else None
    except json.JSONDecodeError:
        return None


def run(exe, port, args, cpus=None, timeout=600, check=True):
    """One echo-load run to its end; its JSON. check: LoadFailed unless it exited 0 with JSON;
    otherwise a failed run gives {"error": its last words} when it printed no JSON."""
    return run_rc(exe, port, args, cpus, timeout, check)[0]


def run_rc(exe, port, args, cpus=None, timeout=600, check=True):
    """run(), and echo-load's exit status beside its JSON (4: too many requests failed)."""
    p = subprocess.run(command(exe, port, args, cpus), capture_output=True, text=True,
                       timeout=timeout)
    doc = parse(p.stdout)
    if check and (p.returncode != 0 or doc is None):
        raise LoadFailed(f"echo-load failed ({p.returncode}): {p.stderr.strip()[-400:]}")
    return (doc if doc is not None else {"error": p.stderr.strip()}), p.returncode


def start(exe, port, args, cpus=None):
    """echo-load started in the background (for a caller that samples the server meanwhile);
    read it with parse(proc.communicate()[0])."""
    return subprocess.Popen(command(exe, port, args, cpus), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def without(args, *flags):
    """args less each of `flags` and its value."""
    out, skip = [], False
    for x in args:
        if skip:
            skip = False
        elif x in flags:
            skip = True
        else:
            out.append(x)
    return out
