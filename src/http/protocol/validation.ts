import type { FastifySchemaCompiler } from 'fastify';
import { coercingAjv, strictAjv } from '../../schemas/validator.js';

/** Bodies are validated strictly; query strings and path parameters are text, coerced to their types. */
export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? strictAjv : coercingAjv).compile(schema as object);
