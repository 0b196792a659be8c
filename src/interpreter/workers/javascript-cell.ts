import ts from 'typescript'

/**
 * Turns a cell into a script for `vm`: an async function (top-level `await`) whose top-level
 * declarations become globals for later cells, whose `import`s load through
 * `__sandbar_import` (ESM and CommonJS packages from the cwd, node built-ins), and which
 * returns its final expression's value.
 */
export function cellScript(code: string, typescript: boolean): string {
  const source = typescript ? stripTypes(code) : code
  const file = ts.createSourceFile(
    'cell.js',
    source,
    ts.ScriptTarget.Latest,
    true,
    ts.ScriptKind.JS,
  )
  const edits: { start: number; end: number; text: string }[] = []
  const names: string[] = []
  visitDynamicImports(file, edits)
  const statements = file.statements
  statements.forEach((statement, index) => {
    const start = statement.getStart()
    if (ts.isImportDeclaration(statement)) {
      edits.push({ start, end: statement.end, text: importAsCode(statement, names) })
    } else if (ts.isVariableStatement(statement)) {
      const list = statement.declarationList
      // `var` inside the cell's function: re-declaring in a later cell is no error.
      const keywordLength = list.flags & ts.NodeFlags.Const ? 'const'.length : 'let'.length
      edits.push({ start: list.getStart(), end: list.getStart() + keywordLength, text: 'var' })
      for (const declaration of list.declarations) collectNames(declaration.name, names)
    } else if (
      (ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement)) &&
      statement.name
    ) {
      names.push(statement.name.text)
    } else if (index === statements.length - 1 && ts.isExpressionStatement(statement)) {
      edits.push({ start, end: start, text: 'return (' })
      edits.push({ start: statement.expression.end, end: statement.expression.end, text: ')' })
    }
  })
  let body = source
  for (const edit of edits.sort((a, b) => b.start - a.start || b.end - a.end)) {
    body = body.slice(0, edit.start) + edit.text + body.slice(edit.end)
  }
  const exports = names.map((name) => `try { globalThis.${name} = ${name} } catch {}`).join('\n')
  return `(async () => {\ntry {\n${body}\n} finally {\n${exports}\n}\n})()`
}

function stripTypes(code: string): string {
  return ts.transpileModule(code, {
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      verbatimModuleSyntax: true,
    },
  }).outputText
}

function importAsCode(declaration: ts.ImportDeclaration, names: string[]): string {
  const specifier = declaration.moduleSpecifier.getText()
  const load = `await __sandbar_import(${specifier})`
  const clause = declaration.importClause
  if (clause === undefined) return `${load};`
  const parts = [`var __sandbar_module = ${load};`]
  if (clause.name) {
    names.push(clause.name.text)
    parts.push(`var ${clause.name.text} = __sandbar_module.default;`)
  }
  const bindings = clause.namedBindings
  if (bindings && ts.isNamespaceImport(bindings)) {
    names.push(bindings.name.text)
    parts.push(`var ${bindings.name.text} = __sandbar_module;`)
  } else if (bindings) {
    const fields = bindings.elements.map((element) => {
      names.push(element.name.text)
      return `${(element.propertyName ?? element.name).getText()}: ${element.name.text}`
    })
    parts.push(`var { ${fields.join(', ')} } = __sandbar_module;`)
  }
  return parts.join(' ')
}

function collectNames(name: ts.BindingName, names: string[]): void {
  if (ts.isIdentifier(name)) names.push(name.text)
  else
    for (const element of name.elements)
      if (!ts.isOmittedExpression(element)) collectNames(element.name, names)
}

function visitDynamicImports(node: ts.Node, edits: { start: number; end: number; text: string }[]) {
  if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
    edits.push({
      start: node.expression.getStart(),
      end: node.expression.end,
      text: '__sandbar_import',
    })
  }
  ts.forEachChild(node, (child) => visitDynamicImports(child, edits))
}
