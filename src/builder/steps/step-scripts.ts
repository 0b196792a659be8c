import { SHELL_LIBRARY } from './shell-library.js'

/**
 * RUN's shell (§2.2: `/bin/bash -l -c`). Whether the image has bash is decided inside the same
 * process, so it costs no extra round trip and stays right after a step installs bash; images
 * without it (busybox, Alpine) get `/bin/sh -c`. argv: the command.
 */
export const RUN_SCRIPT =
  'if [ -x /bin/bash ]; then exec /bin/bash -l -c "$1"; fi; exec /bin/sh -c "$1"'

/**
 * COPY/ADD placement with Docker COPY semantics (§2.2), as root. argv: the plain tar archive,
 * the source's base in it (empty for the archive's root), `1` when the source is a glob, the
 * destination (relative ones resolve against the user's home), `1` when it names a directory,
 * owner `user:group`, mode (or empty), the context user. New entries are chowned (symlinks
 * themselves, never their targets) and chmodded before they move, so existing directories they
 * merge into keep their own owner and mode; the archive and the unpack directory go at exit.
 */
export const COPY_SCRIPT = `${SHELL_LIBRARY}
archive=$1 base=$2 glob=$3 dest=$4 dest_dir=$5 owner=$6 mode=$7 user=$8
unpack=
trap 'rm -rf "$archive" \${unpack:+"$unpack"}' EXIT
unpack=$(mktemp -d /tmp/sandbar-copy.XXXXXX) || fail "cannot make a directory in /tmp"
tar -xf "$archive" -C "$unpack" || fail "cannot unpack the uploaded files"
case $dest in
  /*) ;;
  *)
    passwd_entry "$user" || fail "user $user has no home directory to resolve $dest against"
    dest=$pw_home/$dest
    ;;
esac
source=$unpack/$base
[ -e "$source" ] || [ -L "$source" ] || fail "$base is not among the uploaded files"
chown -hR "$owner" "$source" || fail "cannot give the files to $owner"
if [ -n "$mode" ]; then
  find "$source" ! -type l -exec chmod "$mode" {} + || fail "cannot set mode $mode"
fi

# place SRC TARGET: moves SRC to TARGET, merging a directory into an existing one.
place() (
  if [ -d "$1" ] && [ ! -L "$1" ] && [ -d "$2" ]; then
    for child in "$1"/* "$1"/.[!.]* "$1"/..?*; do
      [ -e "$child" ] || [ -L "$child" ] || continue
      place "$child" "$2/\${child##*/}" || exit 1
    done
  else
    if [ -d "$2" ] && [ ! -L "$2" ]; then fail "cannot replace directory $2 with a file"; fi
    rm -f "$2" && mv "$1" "$2" || fail "cannot move files to $2"
  fi
)

if [ -n "$glob" ] || { [ -d "$source" ] && [ ! -L "$source" ]; }; then
  make_dirs "$dest" "$owner" || fail "cannot create directory $dest"
  place "$source" "$dest" || exit 1
elif [ -n "$dest_dir" ] || [ -d "$dest" ]; then
  make_dirs "$dest" "$owner" || fail "cannot create directory $dest"
  place "$source" "$dest/\${source##*/}" || exit 1
else
  make_dirs "\${dest%/*}" "$owner" || fail "cannot create the directory of $dest"
  place "$source" "$dest" || exit 1
fi
`

/**
 * WORKDIR (§2.2), as root: creates the absolute directory's missing parts, owned by the context
 * user (and its primary group) from the first new one down. argv: directory, user.
 */
export const WORKDIR_SCRIPT = `${SHELL_LIBRARY}
dir=$1 user=$2
owner=$user
passwd_entry "$user" && owner=$user:$pw_gid
make_dirs "$dir" "$owner" || fail "cannot create directory $dir"
`

/**
 * USER (§2.2), as root: creates the user when missing; with sudo, a passwordless sudoers
 * drop-in. argv: user name, `true` for sudo, the drop-in's file name.
 */
export const USER_SCRIPT = `${SHELL_LIBRARY}
name=$1 sudo=$2 sudoers_file=$3
if ! passwd_entry "$name"; then add_user "$name" || fail "cannot create user $name"; fi
if [ "$sudo" = true ]; then grant_sudo "$name" "$sudoers_file" || fail "cannot give $name sudo"; fi
`

/**
 * The finalize phase's configuration (§2.4), as root: user \`user\` (uid 1000 when free) with
 * /home/user from /etc/skel, in the sudo/wheel group where one exists, passwordless sudo and no
 * password; /home/user owned by it; /usr/local writable by all, and /code (777). Nothing in it
 * depends on the build, so its layer is cached like any step's. argv: the sudoers drop-in's name.
 */
export const FINALIZE_SCRIPT = `${SHELL_LIBRARY}
sudoers_file=$1
if ! passwd_entry user; then
  uid=
  id_used /etc/passwd 1000 || uid=1000
  add_user user "$uid" || fail "cannot create user user"
  passwd_entry user || fail "user user is missing after its creation"
fi
if [ ! -d /home/user ]; then
  mkdir -p /home/user || fail "cannot create /home/user"
  [ -d /etc/skel ] && cp -a /etc/skel/. /home/user/
fi
if command -v usermod >/dev/null 2>&1; then
  for group in sudo wheel; do
    has_entry /etc/group "$group" && usermod -a -G "$group" user
  done
fi
grant_sudo user "$sudoers_file" || fail "cannot give user sudo"
chown -R "user:$pw_gid" /home/user || fail "cannot give /home/user to user"
if [ -d /usr/local ]; then chmod -R 777 /usr/local || fail "cannot open /usr/local"; fi
mkdir -p /code && chmod 777 /code || fail "cannot create /code"
`
