import { describe, expect, it } from 'vitest'
import {
  formatImageReference,
  isLoopbackRegistry,
  parseImageReference,
} from '../../../../src/builder/image/image-reference.js'

describe('image references', () => {
  it.each([
    ['ubuntu', 'docker.io/library/ubuntu:latest'],
    ['ubuntu:22.04', 'docker.io/library/ubuntu:22.04'],
    ['e2bdev/code-interpreter:latest', 'docker.io/e2bdev/code-interpreter:latest'],
    ['docker.io/node', 'docker.io/library/node:latest'],
    ['ghcr.io/owner/app/tool:v1', 'ghcr.io/owner/app/tool:v1'],
    ['localhost/app', 'localhost/app:latest'],
    ['127.0.0.1:5000/tests/musl:1', '127.0.0.1:5000/tests/musl:1'],
    ['registry:5000/app', 'registry:5000/app:latest'],
    [`python@sha256:${'a'.repeat(64)}`, `docker.io/library/python@sha256:${'a'.repeat(64)}`],
    [
      `123.dkr.ecr.eu-west-1.amazonaws.com/app:2@sha256:${'b'.repeat(64)}`,
      `123.dkr.ecr.eu-west-1.amazonaws.com/app@sha256:${'b'.repeat(64)}`,
    ],
  ])('reads %s as Docker does: %s', (image, full) => {
    expect(formatImageReference(parseImageReference(image))).toBe(full)
  })

  it('names the registry host that logins are for', () => {
    expect(parseImageReference('gcr.io/project/image:1').registry).toBe('gcr.io')
    expect(parseImageReference('busybox').registry).toBe('docker.io')
  })

  it('refuses references that name nothing', () => {
    expect(() => parseImageReference('')).toThrow(/invalid image reference/)
    expect(() => parseImageReference('a b')).toThrow(/invalid image reference/)
  })

  it.each([
    ['127.0.0.1:5000', true],
    ['127.4.5.6', true],
    ['localhost:5000', true],
    ['localhost', true],
    ['[::1]:5000', true],
    ['docker.io', false],
    ['10.0.0.1:5000', false],
    ['127.0.0.1.example.com', false],
    ['localhost.example.com:5000', false],
  ])('%s is on loopback: %s', (registry, loopback) => {
    expect(isLoopbackRegistry(registry)).toBe(loopback)
  })
})
