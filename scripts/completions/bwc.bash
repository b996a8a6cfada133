# bash completion for bwc(1); installed as share/bash-completion/completions/bwc.
# Self-contained (it needs none of bash-completion's helpers), so that it can be sourced
# by hand too.

# _bwc_add WORDS...: adds the words that start with $cur.
_bwc_add() {
    local w
    for w in "$@"; do
        [[ $w == "$cur"* ]] && COMPREPLY+=("$w")
    done
}

# _bwc_files [EXT...]: adds the files ending in .EXT and the folders; every file without EXT.
_bwc_files() {
    local f ext
    compopt -o filenames 2>/dev/null
    if [ $# = 0 ]; then
        while IFS= read -r f; do COMPREPLY+=("$f"); done < <(compgen -f -- "$cur")
        return
    fi
    for ext; do
        while IFS= read -r f; do COMPREPLY+=("$f"); done < <(compgen -f -X "!*.$ext" -- "$cur")
    done
    while IFS= read -r f; do COMPREPLY+=("$f"); done < <(compgen -d -- "$cur")
}

_bwc() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} opt=
    COMPREPLY=()
    # bash splits --opt=VALUE at the `=` (COMP_WORDBREAKS): complete VALUE.
    if [ "$cur" = = ]; then
        opt=$prev cur=
    elif [ "$prev" = = ] && [ "$COMP_CWORD" -ge 2 ]; then
        opt=${COMP_WORDS[COMP_CWORD - 2]}
    fi
    case $opt in
        --emit) _bwc_add ast ir automata maps c seccomp; return ;;
        --backend) _bwc_add maps c; return ;;
        --format) _bwc_add text json sarif; return ;;
    esac

    local command=
    [ "$COMP_CWORD" -gt 1 ] && command=${COMP_WORDS[1]}
    case $prev in
        -I) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -d -- "$cur"); return ;;
        -D) compopt -o nospace 2>/dev/null; _bwc_add HOME= USER= UID= GID= CWD= EXE=; return ;;
        -o)
            if [ "$command" = learn ]; then _bwc_files bwp; else _bwc_files o; fi
            return ;;
        --name | --uid | --gid | --ioctl) return ;;
        --exe | --batch) _bwc_files; return ;;
        --flags)
            _bwc_add O_CREAT O_EXCL O_NOCTTY O_TRUNC O_APPEND O_NONBLOCK O_DSYNC O_DIRECT O_DIRECTORY \
                O_NOFOLLOW O_NOATIME O_SYNC O_TMPFILE
            return ;;
        --device) compopt -o nospace 2>/dev/null; _bwc_add c: b:; return ;;
    esac

    local pipeline=(-D -I --no-symlink-check)
    case $command in
        check)
            if [[ $cur == -* ]]; then
                _bwc_add --format= -Werror "${pipeline[@]}"
            else
                _bwc_files bwp
            fi ;;
        fmt)
            if [[ $cur == -* ]]; then _bwc_add --check -; else _bwc_files bwp; fi ;;
        inspect)
            [ "$COMP_CWORD" = 2 ] && _bwc_files o ;;
        learn)
            if [[ $cur == -* ]]; then _bwc_add -o --name; else _bwc_files; fi ;;
        query)
            # The words so far, without the options and their values: the policy, then the query.
            local i w positional=()
            for ((i = 2; i < COMP_CWORD; i++)); do
                w=${COMP_WORDS[i]}
                case $w in
                    -D | -I | --exe | --uid | --gid | --flags | --device | --ioctl | --batch) ((i++)) ;;
                    -*) ;;
                    *) positional+=("$w") ;;
                esac
            done
            case ${#positional[@]} in
                0)
                    if [[ $cur == -* ]]; then _bwc_add "${pipeline[@]}"; else _bwc_files bwp o; fi ;;
                1)
                    _bwc_add read write append exec create delete rename link metadata stat attr ioctl \
                        syscall connect bind socket --batch ;;
                2)
                    case ${positional[1]} in
                        connect | bind) _bwc_add tcp udp ;;
                        socket) _bwc_add unix inet inet6 netlink packet bluetooth vsock can alg xdp key tipc rds ;;
                        syscall) ;;
                        *) _bwc_files ;;
                    esac ;;
                *)
                    case ${positional[1]} in
                        syscall | socket) ;;
                        connect | bind) _bwc_add --exe --uid --gid ;;
                        *) _bwc_add --exe --uid --gid --owner --flags --device --ioctl ;;
                    esac ;;
            esac ;;
        *)
            if [[ $cur == -* ]]; then
                _bwc_add -o --backend= --emit= --stats --format= "${pipeline[@]}"
                [ "$COMP_CWORD" = 1 ] && _bwc_add --version --help
            else
                [ "$COMP_CWORD" = 1 ] && _bwc_add check fmt query inspect learn
                _bwc_files bwp
            fi ;;
    esac
    # An option that wants `=VALUE` goes on without a space.
    [[ ${#COMPREPLY[@]} = 1 && ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null
    return 0
}
complete -F _bwc bwc
