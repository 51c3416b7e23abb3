import Type from 'typebox';

export const Health = Type.Object(
  { status: Type.Literal('ok') },
  { $id: 'Health', description: 'The service and its database answer.' },
);

export const MetricsText = Type.String({ $id: 'MetricsText', description: 'Prometheus text exposition format 0.0.4.' });
