/**
 * POSIX sh functions the step scripts share. They use only what both GNU coreutils and busybox
 * provide (no bash, no getent, no `local`: functions that recurse or change IFS run in a
 * subshell), and read /etc/passwd and /etc/group themselves, so they work in a busybox-only
 * rootfs as well as in Debian or Fedora.
 */
export const SHELL_LIBRARY = `
set -u
fail() { printf '%s\\n' "$*" >&2; exit 1; }

# passwd_entry NAME: sets pw_uid, pw_gid and pw_home from /etc/passwd; false if NAME is absent.
passwd_entry() {
  [ -f /etc/passwd ] || return 1
  while IFS=: read -r pw_name _ pw_uid pw_gid _ pw_home _ || [ -n "$pw_name" ]; do
    [ "$pw_name" = "$1" ] && return 0
    pw_name=
  done < /etc/passwd
  return 1
}

# has_entry FILE NAME: FILE (passwd or group format) has an entry called NAME.
has_entry() {
  [ -f "$1" ] || return 1
  while IFS=: read -r entry_name _ || [ -n "$entry_name" ]; do
    [ "$entry_name" = "$2" ] && return 0
    entry_name=
  done < "$1"
  return 1
}

# id_used FILE ID: some entry of FILE (passwd or group format) has numeric id ID.
id_used() {
  [ -f "$1" ] || return 1
  while IFS=: read -r entry_name _ entry_id _ || [ -n "$entry_name" ]; do
    [ "$entry_id" = "$2" ] && return 0
    entry_name=
  done < "$1"
  return 1
}

# free_id FILE START: the lowest id from START up that FILE does not use.
free_id() {
  free=$2
  while id_used "$1" "$free"; do free=$((free + 1)); done
  printf '%s\\n' "$free"
}

# make_dirs DIR OWNER: creates DIR's missing directories, each new one chowned to OWNER.
make_dirs() (
  IFS=/
  set -f
  path=
  for part in $1; do
    [ -n "$part" ] || continue
    path=$path/$part
    [ -d "$path" ] && continue
    mkdir "$path" || exit 1
    chown "$2" "$path" || exit 1
  done
)

# add_user NAME [UID]: a user with a same-named group and /home/NAME from /etc/skel, through
# useradd where the image has it, else by writing the account files as useradd would.
add_user() {
  shell=/bin/sh
  [ -x /bin/bash ] && shell=/bin/bash
  if command -v useradd >/dev/null 2>&1; then
    set -- "$1" "\${2:-}"
    group_flag=
    has_entry /etc/group "$1" && group_flag=--gid
    useradd --create-home --shell "$shell" \${2:+--uid "$2"} \${group_flag:+"$group_flag" "$1"} "$1"
    return
  fi
  new_uid=\${2:-$(free_id /etc/passwd 1000)}
  if has_entry /etc/group "$1"; then
    new_gid=$(group_id "$1")
  else
    new_gid=$new_uid
    id_used /etc/group "$new_gid" && new_gid=$(free_id /etc/group 1000)
    printf '%s:x:%s:\\n' "$1" "$new_gid" >> /etc/group || return 1
    [ -f /etc/gshadow ] && printf '%s:!::\\n' "$1" >> /etc/gshadow
  fi
  printf '%s:x:%s:%s::/home/%s:%s\\n' "$1" "$new_uid" "$new_gid" "$1" "$shell" >> /etc/passwd ||
    return 1
  [ -f /etc/shadow ] && printf '%s:!:::::::\\n' "$1" >> /etc/shadow
  if [ ! -e "/home/$1" ]; then
    mkdir -p "/home/$1" || return 1
    [ -d /etc/skel ] && cp -a /etc/skel/. "/home/$1/"
    chmod 0750 "/home/$1"
    chown -R "$new_uid:$new_gid" "/home/$1"
  fi
}

# group_id NAME: the numeric id of group NAME.
group_id() {
  while IFS=: read -r entry_name _ entry_id _ || [ -n "$entry_name" ]; do
    [ "$entry_name" = "$1" ] && { printf '%s\\n' "$entry_id"; return 0; }
    entry_name=
  done < /etc/group
  return 1
}

# grant_sudo NAME FILE: passwordless sudo for NAME through /etc/sudoers.d/FILE (0440), and no
# password. The drop-in is written even where sudo is not installed yet, so that a later
# package install of sudo (whose sudoers reads /etc/sudoers.d) honours it.
grant_sudo() {
  if [ ! -d /etc/sudoers.d ]; then
    mkdir -p /etc/sudoers.d && chmod 0755 /etc/sudoers.d || return 1
  fi
  printf '%s ALL=(ALL:ALL) NOPASSWD: ALL\\n' "$1" > "/etc/sudoers.d/$2.new" &&
    chmod 0440 "/etc/sudoers.d/$2.new" &&
    mv -f "/etc/sudoers.d/$2.new" "/etc/sudoers.d/$2" || return 1
  if command -v passwd >/dev/null 2>&1; then passwd -d "$1" >/dev/null 2>&1; fi
  return 0
}
`
