/** What mmdebstrap installs for a template: the Debian release, its packages and sources. */
export interface DebianRecipe {
  suite: string
  packages: readonly string[]
  /** `deb URI SUITE COMPONENTS` lines (the host's own mirrors: apt-sources.ts). */
  sources: readonly string[]
}

/** The `base` template's packages (issue 3, "The base template"); `passwd` comes with minbase. */
export const BASE_PACKAGES: readonly string[] = [
  'python3',
  // `python` as E2B's base has it: the SDK's docs and tests run `python -m http.server`.
  'python-is-python3',
  'python3-pip',
  'nodejs',
  'npm',
  'git',
  'curl',
  'ca-certificates',
  'sudo',
  'procps',
  'iproute2',
]

/** mmdebstrap's argv that builds `recipe` into the directory `target`. */
export function mmdebstrapArgs(recipe: DebianRecipe, target: string): string[] {
  if (recipe.sources.length === 0) {
    throw new Error(`no Debian source for ${recipe.suite} in the host's apt configuration`)
  }
  return [
    // minbase = Essential plus Priority:required, which brings `passwd` (useradd, groupadd) and
    // `login`; the `apt` variant lacks both, so user `user` could not be made. host-facts: ~14 s.
    '--variant=minbase',
    // We run as root (host-facts: the service must); explicit, so mmdebstrap never silently
    // picks the unshare mode, whose layer would be owned by a subordinate ID range.
    '--mode=root',
    '--format=directory',
    // dpkg's "Unpacking…/Setting up…" lines: progress a person can watch for 30–90 s.
    '--verbose',
    `--include=${recipe.packages.join(',')}`,
    recipe.suite,
    target,
    ...recipe.sources,
  ]
}
