/** Where `@e2b/code-interpreter` reaches the interpreter in its sandbox (wave2-contracts §1.1). */
export const INTERPRETER_PORT = 49999
