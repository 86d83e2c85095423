"""Commands by what they do: a shell command's programs and verbs, the folders it runs in, and its other words.

`make build`, `cd infra/terraform/envs/prod && terraform apply`, `kubectl -n jobs delete pvc data-0`:
a command is split at `&&`, `||`, `;` and `|` into steps. A step's program is its first word
(past `VAR=value` assignments and `sudo`/`env`/`time`/`exec`/`nohup`; a path keeps its last segment:
`./gradlew` is `gradlew`), its verb the first word after it that is not a flag or a flag's value
(`go get`, `terraform apply`, `kubectl delete`; a flag's value is the word after a short flag such as
`-n`). A step `cd FOLDER` (or `pushd`) names the folder the rest runs in. Each program also answers to
the build files and ecosystem it belongs to (PROGRAMS: `make` is a Makefile, `go get` is Go modules,
`pip` is requirements and pyproject, `npm`/`yarn`/`pnpm` are package.json and its lockfile), so a record
about the Makefile is found by `make`. Stdlib only: the agent hooks parse every command they see.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from git_memzoi.index import fts

#: A program -> its build files and its ecosystem's name (each searched as a phrase of its words: `package.json`
#: is "package json", never "package" alone), so that `make` finds a record about the Makefile.
PROGRAMS: dict[str, tuple[str, ...]] = {
    "make": ("Makefile", "GNUmakefile"),
    "go": ("go.mod", "go.sum", "go modules"),
    "pip": ("requirements.txt", "pyproject.toml", "pip install"),
    "pip3": ("pip", "requirements.txt", "pyproject.toml"),
    "poetry": ("pyproject.toml", "poetry.lock"),
    "uv": ("pyproject.toml", "uv.lock"),
    "npm": ("package.json", "package-lock.json"),
    "npx": ("npm", "package.json"),
    "yarn": ("package.json", "yarn.lock"),
    "pnpm": ("package.json", "pnpm-lock.yaml"),
    "terraform": ("tfstate", "terraform.tfvars"),
    "tofu": ("terraform", "tfstate"),
    "kubectl": ("kubernetes", "k8s"),
    "helm": ("Chart.yaml", "helm chart", "values.yaml"),
    "docker": ("Dockerfile", "docker-compose"),
    "docker-compose": ("docker compose", "docker-compose.yml"),
    "bazel": ("BUILD.bazel", "MODULE.bazel", "bazelrc", "bzlmod"),
    "bazelisk": ("bazel",),
    "gradle": ("gradlew", "build.gradle", "build.gradle.kts"),
    "gradlew": ("gradle", "build.gradle", "build.gradle.kts"),
    "mvn": ("maven", "pom.xml"),
    "cargo": ("Cargo.toml", "Cargo.lock"),
}
#: Words that run the program after them.
_WRAPPERS = frozenset({"sudo", "env", "time", "exec", "nohup", "command", "xargs"})
_FOLDER_PROGRAMS = frozenset({"cd", "pushd"})
_STEP = re.compile(r"&&|\|\||[;|\n]")
_VERB = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
#: Short flags that take a value as the next word (`-n NAMESPACE`, `-C DIR`, `-f FILE`).
_VALUE_FLAGS = frozenset({"-n", "-C", "-f", "-c", "-o", "-p", "-e", "-t", "-l"})


class Step(NamedTuple):
    """One program a command runs: its name, its verb (or None) and the words it answers to."""

    program: str
    verb: str | None

    def ecosystem(self) -> tuple[str, ...]:
        """The words of the program's build files and ecosystem."""
        return PROGRAMS.get(self.program, ())


class Parsed(NamedTuple):
    """A command as its steps, the folders it `cd`s into, and its other significant words (a folder's too)."""

    steps: list[Step]
    folders: list[str]
    words: list[str]


def _program(token: str) -> str:
    return token.rsplit("/", 1)[-1].lower()


def _step(tokens: list[str]) -> tuple[Step | None, str | None]:
    """(the step, or None) and the folder a `cd` names (or None)."""
    while tokens and (_ASSIGNMENT.match(tokens[0]) or tokens[0] in _WRAPPERS):
        tokens = tokens[1:]
    if not tokens:
        return None, None
    program = _program(tokens[0])
    if program in _FOLDER_PROGRAMS:
        folder = next((t for t in tokens[1:] if not t.startswith("-")), None)
        return None, folder
    verb = None
    skip = False
    for token in tokens[1:]:
        if skip:
            skip = False
            continue
        if token.startswith("-"):
            skip = token in _VALUE_FLAGS
            continue
        # a verb is a plain word (`apply`, `run-script`); a path, a quoted value or `$VAR` is an argument
        verb = token.lower() if _VERB.fullmatch(token) else None
        break
    return Step(program, verb), None


def parse(command: str) -> Parsed:
    """The command's steps, folders and other significant words (the programs and verbs left out)."""
    steps: list[Step] = []
    folders: list[str] = []
    for part in _STEP.split(command):
        step, folder = _step(part.split())
        if step is not None and step.program and fts.words(step.program):
            steps.append(step)
        if folder and folder not in folders:
            folders.append(folder.strip("\"'"))
    # the program (a word of its own) and its verb are terms of their own; a folder's words stay, weighing little
    known = {s.program for s in steps} | {s.verb for s in steps if s.verb} | {"cd", "pushd"}
    return Parsed(steps, folders, [w for w in fts.significant(command) if w not in known])
