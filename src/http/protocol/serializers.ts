import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type SerializerFactory = ReturnType<typeof SerializerSelector>;
type Serializer = ReturnType<ReturnType<SerializerFactory>>;

const fastJsonStringify = SerializerSelector();

/** Serializers by the shared schemas and options they were made with, then by their own schema; bounded by the schemas the code holds. */
const byContext = new Map<string, Map<string, Serializer>>();

/**
 * Each response serializer compiled once per process: Fastify's own compiler (fast-json-stringify), with
 * what it made kept by the schemas it was made from. Building the app compiles a serializer for every
 * route's every answer, ~0.35 s of CPU, and Fastify does it anew for each app though the schemas are the
 * same constants: a process that builds several apps (the tests build hundreds) paid it each time
 * (docs/development.md, What a test costs). A serializer is a pure function of its schema, the shared
 * schemas it refers to and the options, so those are the key, as text: Fastify clones the shared schemas
 * for each app, so no object would be the same twice.
 */
export const cachedSerializers: SerializerFactory = (externalSchemas, serializerOptions) => {
  const contextKey = JSON.stringify([externalSchemas ?? null, serializerOptions ?? null]);
  let compiled = byContext.get(contextKey);
  if (!compiled) byContext.set(contextKey, compiled = new Map<string, Serializer>());
  const build = fastJsonStringify(externalSchemas, serializerOptions);
  return (route) => {
    const key = JSON.stringify(route.schema);
    let serializer = compiled.get(key);
    if (!serializer) compiled.set(key, serializer = build(route));
    return serializer;
  };
};
