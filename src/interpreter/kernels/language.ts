/**
 * Languages as the interpreter names them (wire contract §1.3, §1.8), and the snippets the
 * server runs silently in a context: its working directory and its environment variables.
 */
export function normaliseLanguage(language: string | null | undefined): string {
  const name = (language ?? '').trim().toLowerCase()
  if (name === '') return 'python'
  if (name === 'js') return 'javascript'
  if (name === 'ts') return 'typescript'
  return name
}

export interface LanguageSnippets {
  chdir(cwd: string): string
  setEnv(name: string, value: string): string
  unsetEnv(name: string): string
}

// JSON string literals are valid string literals in Python and JavaScript alike.
const quote = (text: string) => JSON.stringify(text)
const shellQuote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`

const python: LanguageSnippets = {
  chdir: (cwd) => `import os as __sandbar_os\n__sandbar_os.chdir(${quote(cwd)})`,
  setEnv: (name, value) =>
    `import os as __sandbar_os\n__sandbar_os.environ[${quote(name)}] = ${quote(value)}`,
  unsetEnv: (name) => `import os as __sandbar_os\n__sandbar_os.environ.pop(${quote(name)}, None)`,
}

const javascript: LanguageSnippets = {
  chdir: (cwd) => `process.chdir(${quote(cwd)})`,
  setEnv: (name, value) => `process.env[${quote(name)}] = ${quote(value)}`,
  unsetEnv: (name) => `delete process.env[${quote(name)}]`,
}

// R reads a JSON string literal as the same text: JSON's escapes (\" \\ \n \t \b \f \r and
// \uXXXX for other control characters) are R's too, and R gives `$` no meaning in a string. A
// string literal may name an argument, so any variable name can be set.
const r: LanguageSnippets = {
  chdir: (cwd) => `setwd(${quote(cwd)})`,
  setEnv: (name, value) => `Sys.setenv(${quote(name)} = ${quote(value)})`,
  unsetEnv: (name) => `Sys.unsetenv(${quote(name)})`,
}

const bash: LanguageSnippets = {
  chdir: (cwd) => `cd -- ${shellQuote(cwd)}`,
  setEnv: (name, value) => `export ${name}=${shellQuote(value)}`,
  unsetEnv: (name) => `unset ${name}`,
}

const snippets: Record<string, LanguageSnippets> = {
  python,
  javascript,
  typescript: javascript,
  r,
  bash,
}

export function snippetsFor(language: string): LanguageSnippets | undefined {
  return snippets[language]
}
