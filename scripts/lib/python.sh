# Which Python dbswarm runs in; sourced by scripts/demo, install, test, lint and dbswarm (from the
# checkout's root). In this order:
#   $PYTHON               when given (.ci/run gives its own fresh virtualenv's): used as it is
#   $VIRTUAL_ENV          an active virtualenv: its python
#   .venv/ of the checkout otherwise (gitignored): a stock Debian 12 / Ubuntu 24.04 python3 is
#                         "externally managed" (PEP 668: pip refuses to install into it), so
#                         scripts/install makes this virtualenv (dbswarm_make_venv) and installs
#                         dbswarm there; `source .venv/bin/activate` (or scripts/dbswarm) reaches it
# Sets PY (the interpreter) and DBSWARM_OWN_VENV (1 when it is the checkout's .venv/).
# The Python that makes .venv/: $BASE_PYTHON, else python3 (3.11+).

DBSWARM_VENV_DIR=$PWD/.venv
DBSWARM_OWN_VENV=0
if [[ -n ${PYTHON:-} ]]; then
    PY=$PYTHON
elif [[ -n ${VIRTUAL_ENV:-} && -x ${VIRTUAL_ENV}/bin/python ]]; then
    PY=$VIRTUAL_ENV/bin/python
else
    PY=$DBSWARM_VENV_DIR/bin/python
    DBSWARM_OWN_VENV=1
fi

# apt-get install PACKAGES as root, or through `sudo -n` (never a password prompt); status of apt-get
dbswarm_apt_install() {
    command -v apt-get >/dev/null 2>&1 || return 1
    local sudo=()
    if [[ $EUID -ne 0 ]]; then sudo=(sudo -n); fi
    local out
    # quiet unless it fails (apt's notes on stderr, debconf's "delaying package configuration")
    out=$({ "${sudo[@]}" apt-get update -qq && "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
        --no-install-recommends "$@"; } 2>&1) || { printf '%s\n' "$out" | tail -n 20 >&2; return 1; }
}

# Make the checkout's .venv/ when PY is its python and it does not exist yet. Debian's and Ubuntu's
# python3 make a virtualenv only with python3-venv (ensurepip): apt-get installs it when missing.
dbswarm_make_venv() {
    [[ $DBSWARM_OWN_VENV == 1 ]] || return 0
    [[ -x $PY ]] && "$PY" -c "import pip" >/dev/null 2>&1 && return 0
    local base=${BASE_PYTHON:-python3}
    if ! command -v "$base" >/dev/null 2>&1; then
        echo "install: no $base found: install Python 3.11+ (Debian: apt-get install python3 python3-venv)" >&2
        return 1
    fi
    if ! "$base" -c "import sys; sys.exit(sys.version_info < (3, 11))"; then
        echo "install: $base is Python $("$base" -c 'import platform; print(platform.python_version())'); dbswarm" \
             "needs 3.11+ (set BASE_PYTHON to one)" >&2
        return 1
    fi
    echo "install: a virtualenv for dbswarm in $DBSWARM_VENV_DIR ($base -m venv; no virtualenv was active" \
         "and PYTHON was not set)" >&2
    rm -rf "$DBSWARM_VENV_DIR"
    if ! "$base" -m venv "$DBSWARM_VENV_DIR" >/dev/null 2>&1; then
        rm -rf "$DBSWARM_VENV_DIR"
        local ver
        ver=$("$base" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
        echo "install: apt-get install python3-venv python$ver-venv ($base -m venv needs them)" >&2
        dbswarm_apt_install python3-venv "python$ver-venv" \
            || { echo "install: apt-get install python3-venv failed: install it (as root), then run this again" >&2
                 return 1; }
        "$base" -m venv "$DBSWARM_VENV_DIR" || { echo "install: $base -m venv $DBSWARM_VENV_DIR failed" >&2; return 1; }
    fi
}

# For the scripts that only use dbswarm's Python (scripts/lint, scripts/dbswarm): where .venv/ was
# never made, the python3 on PATH (a developer's own, with dbswarm and the tools installed)
dbswarm_existing_python() {
    if [[ $DBSWARM_OWN_VENV == 1 && ! -x $PY ]]; then
        PY=$(command -v python3 || echo python3)
        DBSWARM_OWN_VENV=0
    fi
}

# The one line that tells where dbswarm is and how to reach it (nothing when PYTHON or an active
# virtualenv was used: the user chose that Python and knows how to reach it)
dbswarm_where() {
    [[ $DBSWARM_OWN_VENV == 1 ]] || return 0
    echo "dbswarm is installed in the virtualenv $DBSWARM_VENV_DIR: \`source .venv/bin/activate\` puts" \
         "\`dbswarm\` on PATH (or run scripts/dbswarm ARGS without it)" >&2
}
