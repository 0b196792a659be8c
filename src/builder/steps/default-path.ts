/**
 * The PATH envd gives a process when it has none of its own (src/envd/process/process-env.ts);
 * steps' helper scripts run with it so they find `useradd` in /usr/sbin whatever the recipe's env.
 */
export const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
