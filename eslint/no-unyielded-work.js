// A work (src/db/work.ts) is a generator: calling it runs nothing until it is yielded with `yield*`
// (or returned, or handed to a runner). `first(statement, params);` on a line of its own type-checks
// and silently skips the statement; this rule makes it an error, for any generator.
import { ESLintUtils } from '@typescript-eslint/utils';

const GENERATORS = new Set(['Generator', 'AsyncGenerator', 'Work']);

export default ESLintUtils.RuleCreator.withoutDocs({
  meta: {
    type: 'problem',
    messages: {
      unyielded: 'This generator (a work?) is created and dropped, so nothing of it runs: write `yield* …`, return it, or pass it to a runner.',
    },
    schema: [],
  },
  defaultOptions: [],
  create(context) {
    const services = ESLintUtils.getParserServices(context);
    const isGenerator = (node) => {
      const type = services.getTypeAtLocation(node);
      const name = type.aliasSymbol?.getName() ?? type.getSymbol()?.getName();
      return name !== undefined && GENERATORS.has(name);
    };
    const check = (node) => {
      if (isGenerator(node)) context.report({ node, messageId: 'unyielded' });
    };
    return {
      ExpressionStatement(node) {
        const expression = node.expression.type === 'UnaryExpression' && node.expression.operator === 'void'
          ? node.expression.argument : node.expression;
        // `yield` (without *) of a work hands the generator object to the runner: a statement, never rows.
        if (expression.type === 'YieldExpression' && !expression.delegate && expression.argument) check(expression.argument);
        else if (expression.type !== 'YieldExpression' && expression.type !== 'AssignmentExpression') check(expression);
      },
    };
  },
});
