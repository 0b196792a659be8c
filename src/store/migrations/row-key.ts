import type { ColumnDataType, ColumnDefinitionBuilder } from 'kysely'
import type { StoreDialect } from './0001-init.js'

/**
 * An auto-numbered primary key, the one construct the two dialects spell differently: it
 * orders rows appended in the same millisecond (log tables).
 */
export function rowKeyColumn(dialect: StoreDialect): {
  type: ColumnDataType
  build: (col: ColumnDefinitionBuilder) => ColumnDefinitionBuilder
} {
  return dialect === 'sqlite'
    ? { type: 'integer', build: (col) => col.primaryKey().autoIncrement() }
    : { type: 'bigint', build: (col) => col.primaryKey().generatedAlwaysAsIdentity() }
}
