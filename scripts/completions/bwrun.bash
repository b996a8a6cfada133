# bash completion for bwrun(1); installed as share/bash-completion/completions/bwrun.
# Self-contained (it needs none of bash-completion's helpers), so that it can be sourced
# by hand too.

# _bwrun_add_files EXT: adds the files ending in .EXT and the folders.
_bwrun_add_files() {
    local f
    compopt -o filenames 2>/dev/null
    while IFS= read -r f; do COMPREPLY+=("$f"); done < <(compgen -f -X "!*.$1" -- "$cur")
    while IFS= read -r f; do COMPREPLY+=("$f"); done < <(compgen -d -- "$cur")
}

# _bwrun_command FIRST: completes the program's command line, which starts at word FIRST.
_bwrun_command() {
    if [ "$COMP_CWORD" = "$1" ]; then
        mapfile -t COMPREPLY < <(compgen -c -- "$cur")
    elif declare -F _command_offset >/dev/null; then
        # bash-completion's: the program's own completion, as if it had been typed alone.
        _command_offset "$1"
    else
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    fi
}

_bwrun() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    COMPREPLY=()
    # bash splits `--opt=VALUE` and `NAME=VALUE` at the `=` (COMP_WORDBREAKS).
    if [ "$cur" = = ]; then
        cur=
    elif [ "$prev" = = ] && [ "$COMP_CWORD" -ge 2 ]; then
        prev=${COMP_WORDS[COMP_CWORD - 2]}
    fi
    # The options end at the first word after the policy that is not one, or at `--`:
    # from there on the words are the program's. A value split at `=` is one word here.
    local i=1 start w artifact= learn= value=
    while ((i < COMP_CWORD)); do
        w=${COMP_WORDS[i]} start=$i
        while ((i + 1 < COMP_CWORD)) && [ "${COMP_WORDS[i + 1]}" = = ]; do
            ((i += 2))
            w+="=${COMP_WORDS[i]}"
        done
        ((i++))
        if [ -n "$value" ]; then
            value=
            continue
        fi
        case $w in
            --) _bwrun_command "$i"; return ;;
            --learn) learn=1 value=1 ;;
            --name | --audit | --user | --uid | --gid | --cwd | --setenv | --unsetenv) value=1 ;;
            -*) ;;
            *)
                if [ -z "$artifact" ] && [ -z "$learn" ]; then
                    artifact=$w
                else
                    _bwrun_command "$start"
                    return
                fi ;;
        esac
    done

    case $prev in
        --name | --uid | --gid | --setenv) return ;;
        --user) mapfile -t COMPREPLY < <(compgen -u -- "$cur"); return ;;
        --cwd) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -d -- "$cur"); return ;;
        --audit) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return ;;
        --unsetenv) mapfile -t COMPREPLY < <(compgen -e -- "$cur"); return ;;
        --learn) _bwrun_add_files bwp; return ;;
    esac
    if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W '--name --quiet --audit --user --uid --gid --cwd --setenv
            --unsetenv --clearenv --no-nesting --vm --learn --version --help --' -- "$cur")
    elif [ -n "$artifact" ] || [ -n "$learn" ]; then
        mapfile -t COMPREPLY < <(compgen -c -- "$cur")
    else
        _bwrun_add_files o
    fi
    return 0
}
complete -F _bwrun bwrun
