# bash completion for bwctl(1); installed as share/bash-completion/completions/bwctl.
# Self-contained (it needs none of bash-completion's helpers), so that it can be sourced
# by hand too.

# _bwctl_add WORDS...: adds the words that start with $cur.
_bwctl_add() {
    local w
    for w in "$@"; do
        [[ $w == "$cur"* ]] && COMPREPLY+=("$w")
    done
}

# The running sandboxes' names: the first column of `bwctl list` after its header. Only
# root may list them; anyone else gets no names and no message.
_bwctl_names() {
    [ "$EUID" = 0 ] || return 0
    local name
    while read -r name _; do
        _bwctl_add "$name"
    done < <(command "${COMP_WORDS[0]}" list 2>/dev/null | tail -n +2)
}

_bwctl() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} f
    COMPREPLY=()
    if [ "$COMP_CWORD" = 1 ]; then
        _bwctl_add list show allow deny net remove reload syscall log stop --version --help
        return 0
    fi
    case $prev in
        --access)
            # KINDS is comma-separated: complete the kind after the last comma.
            local done= kind
            [[ $cur == *,* ]] && done=${cur%,*},
            for kind in read write append exec create delete rename link metadata stat attr ioctl all; do
                [[ $done$kind == "$cur"* ]] && COMPREPLY+=("$done$kind")
            done
            return 0 ;;
        --for) return 0 ;;
    esac

    # The words after the verb, without the options and their values.
    local verb=${COMP_WORDS[1]} i w positional=()
    for ((i = 2; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        case $w in
            --access | --for) ((i++)) ;;
            -*) ;;
            *) positional+=("$w") ;;
        esac
    done
    local n=${#positional[@]}
    case $verb in
        show | stop | remove)
            [ "$n" = 0 ] && _bwctl_names ;;
        reload)
            if [ "$n" = 0 ]; then
                _bwctl_names
            elif [ "$n" = 1 ]; then
                compopt -o filenames 2>/dev/null
                while IFS= read -r f; do COMPREPLY+=("$f"); done < <(compgen -f -X '!*.o' -- "$cur")
                while IFS= read -r f; do COMPREPLY+=("$f"); done < <(compgen -d -- "$cur")
            fi ;;
        log)
            if [[ $cur == -* ]]; then _bwctl_add -f --follow --json; elif [ "$n" = 0 ]; then _bwctl_names; fi ;;
        allow | deny)
            if [[ $cur == -* ]]; then
                _bwctl_add --access --for
            elif [ "$n" = 0 ]; then
                _bwctl_names
            elif [ "$n" = 1 ]; then
                compopt -o filenames 2>/dev/null
                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
            fi ;;
        net)
            if [[ $cur == -* ]]; then
                _bwctl_add --for
            elif [ "$n" = 0 ]; then
                _bwctl_add allow deny
            elif [ "$n" = 1 ]; then
                _bwctl_names
            elif [ "$n" = 2 ]; then
                _bwctl_add all family tcp udp
            else
                case ${positional[2]} in
                    family) _bwctl_add unix inet inet6 netlink packet bluetooth vsock can alg xdp key tipc rds ;;
                    tcp | udp) [ "$n" = 3 ] && _bwctl_add connect bind ;;
                esac
            fi ;;
        syscall)
            if [ "$n" = 0 ]; then
                _bwctl_add list allow deny
            elif [ "$n" = 1 ]; then
                _bwctl_names
            fi ;;
    esac
    return 0
}
complete -F _bwctl bwctl
