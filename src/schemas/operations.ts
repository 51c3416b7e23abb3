import Type from 'typebox';
import { ErrorBody, Ref } from './common.js';

export const Health = Type.Object(
  { status: Type.Literal('ok') },
  { $id: 'Health', description: 'The service and its database (and Redis, when configured) answer.' },
);

export const HealthUnavailable = Type.Union([
  Type.Object({
    status: Type.Literal('unavailable'),
    failing: Type.Array(Type.Union([Type.Literal('database'), Type.Literal('redis')]), { description: 'The dependencies that do not answer.' }),
  }, { additionalProperties: false }),
  Ref(ErrorBody),
], { $id: 'HealthUnavailable', description: 'A dependency does not answer, or, in the Error model, the server is stopping.' });

export const MetricsText = Type.String({ $id: 'MetricsText', description: 'Prometheus text exposition format 0.0.4.' });
