import type { FastifyInstance } from 'fastify';
import { pairwiseId } from '../../domain/pairwise.ts';
import { notFound } from '../../platform/http/errors.ts';
import type { ApiContext } from '../context.ts';
import { readRoute } from '../route.ts';
import { schemas } from '../schemas.ts';

export function meRoutes(app: FastifyInstance, context: ApiContext): void {
  readRoute(app, context, {
    url: '/me',
    scope: 'user.read',
    operationId: 'getMe',
    tag: 'User',
    summary: 'Basic profile of the authenticated user.',
    description:
      'The user behind the token. id is pairwise: the same for every token of this app, different for ' +
      'every other app; use it as the user key in your system.',
    ok: { description: 'The user.', schema: schemas.me },
    handler: async (_request, _reply, token) => {
      const user = await context.store.accounts.getUserById(token.userId);
      if (!user) throw notFound('user');
      return {
        data: {
          id: pairwiseId(context.secret, token.appSector, user.id),
          name: user.name,
          email: user.email,
          image: user.image,
        },
      };
    },
  });
}
