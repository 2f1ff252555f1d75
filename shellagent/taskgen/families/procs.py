"""Processes and ports: what runs, what listens, and stopping one thing."""

from __future__ import annotations

from shellagent.taskgen.family import Draw, Instance, family
from shellagent.taskgen.sh import all_of, has, lacks, no_token, number, q, token

SUFFIXES = ("d", "-agent", "-sync", "-worker", "-daemon", "-watch")


def _programs(d: Draw, k: int) -> list[str]:
    names: list[str] = []
    while len(names) < k:
        name = d.service() + d.pick(SUFFIXES)
        if len(name) <= 15 and not any(name in n or n in name for n in names):
            names.append(name)
    return names


def _start(name: str, copies: int = 1) -> list[str]:
    """A long-running program called ``name`` (a copy of sleep), started ``copies`` times."""
    run = f"(nohup /usr/local/bin/{name} 3600 >/dev/null 2>&1 &)"
    return [f"cp /bin/sleep /usr/local/bin/{name}"] + [run] * copies


def _serve(name: str, port: int) -> list[str]:
    """A web server on ``port`` whose process is called ``name``; waits until it listens."""
    return [
        f"ln -sf /usr/bin/python3 /usr/local/bin/{name}",
        # `;`, not `&&`: only the server goes to the background, no shell waits beside it
        f"(cd /tmp; nohup /usr/local/bin/{name} -m http.server {port} --bind 127.0.0.1 "
        ">/dev/null 2>&1 &)",
        f"for i in $(seq 100); do ss -Hltn | grep -q ':{port} ' && break; sleep 0.05; done; "
        f"ss -Hltn | grep -q ':{port} '",
    ]


def _gone(name: str) -> str:
    """No process called ``name`` (given a moment to be reaped after a kill)."""
    return (
        f"for i in $(seq 20); do pgrep -x {q(name)} >/dev/null || break; sleep 0.1; done; "
        f"! pgrep -x {q(name)} >/dev/null"
    )


@family("kill_process", "processes", "stop one program and leave the others running")
def kill_process(d: Draw) -> Instance:
    target, *others = _programs(d, d.num(2, 4))
    setup = [line for name in [target, *others] for line in _start(name)]
    task = d.phrase(
        (
            "The {name} process is stuck. Stop it, but leave the other services running.",
            "Kill {name}; nothing else.",
            "Something called {name} is hogging the machine. Terminate it.",
        ),
        name=target,
    )
    use = d.recipe("kill_process", name=target)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(
            use.command,
            f"{_gone(target)} && echo {q(target + ' is no longer running')}",
        ),
        check=all_of(_gone(target), *(f"pgrep -x {q(o)} >/dev/null" for o in others)),
        answer="Stopped it: {out}.",
        slots={"process": target},
        recipes=(use,),
    )


@family("port_owner", "processes", "which program listens on a port")
def port_owner(d: Draw) -> Instance:
    names = _programs(d, d.num(1, 3))
    ports = d.sample(range(3000, 9900), len(names))
    setup = [line for name, port in zip(names, ports, strict=True) for line in _serve(name, port)]
    task = d.phrase(
        (
            "Which program is listening on port {port}?",
            "Something has grabbed TCP port {port}. What is it?",
            "What process owns the listening socket on port {port}?",
        ),
        port=ports[0],
    )
    use = d.recipe("port_owner", port=ports[0])
    return Instance(
        task=task,
        setup=tuple(setup),
        # `ss -p` cannot name a process another command started (each command runs in a
        # Landlock domain of its own, which keeps it out of the others' /proc/PID/fd); the
        # command line, which holds the port, is what ps and pgrep show.
        gold=(use.command,),
        check=all_of(has(names[0]), lacks(*names[1:])),
        answer=f"Port {ports[0]} belongs to {{out}}.",
        slots={"port": str(ports[0])},
        wrong_answers=("python3", "nginx"),
        kind="question",
        recipes=(use,),
    )


@family("program_port", "processes", "which port a program listens on")
def program_port(d: Draw) -> Instance:
    names = _programs(d, d.num(1, 3))
    ports = d.sample(range(3000, 9900), len(names))
    setup = [line for name, port in zip(names, ports, strict=True) for line in _serve(name, port)]
    task = d.phrase(
        (
            "Which port is {name} listening on?",
            "What TCP port did {name} open for listening?",
            "{name} is running somewhere. On which port does it accept connections?",
        ),
        name=names[0],
    )
    use = d.recipe("program_port", name=names[0])
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=all_of(token(str(ports[0])), no_token(*(str(p) for p in ports[1:]))),
        answer=f"{names[0]} listens on {{out}}.",
        slots={"process": names[0]},
        wrong_answers=tuple(str(p) for p in ports[1:]) + ("8080",),
        kind="question",
        recipes=(use,),
    )


@family("count_processes", "processes", "how many copies of a program run")
def count_processes(d: Draw) -> Instance:
    target, *others = _programs(d, d.num(2, 3))
    k = d.num(2, 6)
    setup = _start(target, k)
    extra = {o: d.num(1, 3) for o in others}
    for o, n in extra.items():
        setup += _start(o, n)
    task = d.phrase(
        (
            "How many {name} processes are running?",
            "Count the running instances of {name}.",
            "how many copies of {name} are up right now?",
        ),
        name=target,
    )
    total = k + sum(extra.values())
    use = d.recipe("count_processes", name=target)
    return Instance(
        task=task,
        setup=tuple(setup),
        gold=(use.command,),
        check=number(k),
        answer=f"{{out}} {target} processes are running.",
        slots={"process": target},
        wrong_answers=(f"{k + 1} processes", f"{total} processes"),
        kind="question",
        recipes=(use,),
    )
