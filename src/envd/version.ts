/**
 * The envd version Sandbar reports. The e2b SDKs gate features on it (wire contract §3.5:
 * 0.5.7 octet-stream upload, 0.6.2 file metadata, 0.6.3 watch entries, 0.6.4 network-mount
 * watches), so it names the E2B envd release whose behaviour this implementation matches.
 */
export const ENVD_VERSION = '0.6.13'

/** envd's port inside every sandbox (the SDK's `envdPort`). */
export const ENVD_PORT = 49983
