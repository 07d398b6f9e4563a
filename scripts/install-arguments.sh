# Sourced by scripts/install.sh and scripts/install-pam.sh: their shared arguments.
#
#   read_install_arguments "$0" "$@"    # sets prefix from --prefix DIR (or --prefix=DIR), or
#                                       # keeps the one set before; -h shows the script's header
read_install_arguments() {
    local script=$1
    shift
    while [ $# -gt 0 ]; do
        case "$1" in
            --prefix) prefix=${2:?--prefix needs a directory}; shift 2 ;;
            --prefix=*) prefix=${1#--prefix=}; shift ;;
            # The header comment, from its second line to the first line that is not one.
            -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$script"; exit 0 ;;
            *) echo "$(basename "$script"): unknown argument '$1'" >&2; exit 2 ;;
        esac
    done
}
