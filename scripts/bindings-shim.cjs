// Stands in for the `bindings` package in the bundles: better-sqlite3 calls
// require('bindings')('better_sqlite3.node'), and `bindings` finds addons by walking up to a
// package root, which a bundle in its own directory does not have. Addons sit in
// ./build/Release beside the bundle (scripts/build.mjs copies them there); `__dirname` is the
// bundle's directory (the banner defines it).
const path = require('node:path')

module.exports = (name) => require(path.join(__dirname, 'build', 'Release', name))
