import type { App } from '@keel/core';
import { Type } from 'typebox';
import type { EngineContext } from '../context.ts';
import { principalOf } from '../http/merchant-auth.ts';
import { commonErrors, ErrorSchema, merchantKeySecurity, Nullable, PageQuery, Uuid } from '../http/schemas.ts';
import { inTransaction } from '../write.ts';
import {
  InventoryItemInputSchema,
  InventoryItemSchema,
  ProcurementOrderInputSchema,
  ProcurementOrderSchema,
  QuoteInputSchema,
  QuoteSchema,
  SupplierInputSchema,
  SupplierSchema,
} from './procurement-schemas.ts';
import {
  addQuote,
  createProcurementOrder,
  deleteInventoryItem,
  deleteSupplier,
  getInventoryItem,
  getProcurementOrder,
  getSupplier,
  listInventoryItems,
  listProcurementOrders,
  listQuotes,
  listSuppliers,
  patchInventoryItem,
  patchSupplier,
  sendProcurementOrder,
  upsertInventoryItem,
  upsertSupplier,
} from './procurement-service.ts';

const config = { merchantKey: true };
const tags = ['procurement'];
const base = '/api/v1/catalog/procurement';
const Params = Type.Object({ id: Type.String({ maxLength: 100 }) });
const ListQuery = Type.Object({ storeId: Type.Optional(Uuid()), ...PageQuery });
const pageOf = <T extends import('typebox').TSchema>(item: T) =>
  Type.Object({ data: Type.Array(item), nextCursor: Nullable(Type.String()) });
const errors = { 404: ErrorSchema, 409: ErrorSchema, ...commonErrors };

export function registerProcurementRoutes(app: App, ctx: EngineContext): void {
  const s = (summary: string, description?: string) => ({
    tags,
    security: merchantKeySecurity,
    summary,
    ...(description ? { description } : {}),
  });

  app.get(
    `${base}/suppliers`,
    {
      schema: {
        ...s('List suppliers'),
        querystring: ListQuery,
        response: { 200: pageOf(SupplierSchema), ...commonErrors },
      },
      config,
    },
    async (request) => listSuppliers(ctx, principalOf(request), { ...request.query, limit: request.query.limit ?? 20 }),
  );
  app.post(
    `${base}/suppliers`,
    {
      schema: {
        ...s(
          'Create or update a supplier',
          'storeId and name are required (400). With an externalId already used in the store, that supplier is updated (200); otherwise one is created (201).',
        ),
        body: SupplierInputSchema,
        response: { 200: SupplierSchema, 201: SupplierSchema, ...errors },
      },
      config,
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const result = await inTransaction(ctx, (trx) => upsertSupplier(trx, principal, request.body));
      return reply.status(result.mode === 'created' ? 201 : 200).send(result.supplier);
    },
  );
  app.get(
    `${base}/suppliers/:id`,
    { schema: { ...s('One supplier'), params: Params, response: { 200: SupplierSchema, ...errors } }, config },
    async (request) => getSupplier(ctx, principalOf(request), request.params.id),
  );
  app.patch(
    `${base}/suppliers/:id`,
    {
      schema: {
        ...s('Update a supplier'),
        params: Params,
        body: Type.Partial(SupplierInputSchema, { minProperties: 1 }),
        response: { 200: SupplierSchema, ...errors },
      },
      config,
    },
    async (request) =>
      inTransaction(ctx, (trx) => patchSupplier(trx, principalOf(request), request.params.id, request.body)),
  );
  app.delete(
    `${base}/suppliers/:id`,
    {
      schema: {
        ...s('Delete a supplier', 'Inventory items keep existing without it.'),
        params: Params,
        response: { 204: Type.Null(), ...errors },
      },
      config,
    },
    async (request, reply) => {
      await inTransaction(ctx, (trx) => deleteSupplier(trx, principalOf(request), request.params.id));
      return reply.status(204).send(null);
    },
  );

  app.get(
    `${base}/inventory-items`,
    {
      schema: {
        ...s('List inventory items'),
        querystring: ListQuery,
        response: { 200: pageOf(InventoryItemSchema), ...commonErrors },
      },
      config,
    },
    async (request) =>
      listInventoryItems(ctx, principalOf(request), { ...request.query, limit: request.query.limit ?? 20 }),
  );
  app.post(
    `${base}/inventory-items`,
    {
      schema: {
        ...s(
          'Create or update an inventory item',
          'storeId and name are required (400). With a sku already used in the store, that item is updated (200, an absolute snapshot); otherwise one is created (201).',
        ),
        body: InventoryItemInputSchema,
        response: { 200: InventoryItemSchema, 201: InventoryItemSchema, ...errors },
      },
      config,
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const result = await inTransaction(ctx, (trx) => upsertInventoryItem(trx, principal, request.body));
      return reply.status(result.mode === 'created' ? 201 : 200).send(result.item);
    },
  );
  app.get(
    `${base}/inventory-items/:id`,
    {
      schema: { ...s('One inventory item'), params: Params, response: { 200: InventoryItemSchema, ...errors } },
      config,
    },
    async (request) => getInventoryItem(ctx, principalOf(request), request.params.id),
  );
  app.patch(
    `${base}/inventory-items/:id`,
    {
      schema: {
        ...s('Update an inventory item'),
        params: Params,
        body: Type.Partial(InventoryItemInputSchema, { minProperties: 1 }),
        response: { 200: InventoryItemSchema, ...errors },
      },
      config,
    },
    async (request) =>
      inTransaction(ctx, (trx) => patchInventoryItem(trx, principalOf(request), request.params.id, request.body)),
  );
  app.delete(
    `${base}/inventory-items/:id`,
    { schema: { ...s('Delete an inventory item'), params: Params, response: { 204: Type.Null(), ...errors } }, config },
    async (request, reply) => {
      await inTransaction(ctx, (trx) => deleteInventoryItem(trx, principalOf(request), request.params.id));
      return reply.status(204).send(null);
    },
  );

  app.get(
    `${base}/orders`,
    {
      schema: {
        ...s('List procurement orders', 'Newest first.'),
        querystring: Type.Object({
          storeId: Type.Optional(Uuid()),
          status: Type.Optional(Type.Union([Type.Literal('requested'), Type.Literal('quote_received')])),
          ...PageQuery,
        }),
        response: { 200: pageOf(ProcurementOrderSchema), ...commonErrors },
      },
      config,
    },
    async (request) =>
      listProcurementOrders(ctx, principalOf(request), { ...request.query, limit: request.query.limit ?? 20 }),
  );
  app.post(
    `${base}/orders`,
    {
      schema: {
        ...s(
          'Request a procurement order',
          'Starts the supplier quote request workflow: status `requested`, event `procurement.order.created`. `items` (1–100) is required; each line needs `name` and an integer `quantity` ≥ 1 (400 otherwise).',
        ),
        body: ProcurementOrderInputSchema,
        response: { 201: ProcurementOrderSchema, ...errors },
      },
      config,
    },
    async (request, reply) => {
      const principal = principalOf(request);
      return reply
        .status(201)
        .send(
          await inTransaction(ctx, (trx, sink) => createProcurementOrder(trx, sink, principal, request.body, 'api')),
        );
    },
  );
  app.get(
    `${base}/orders/:id`,
    {
      schema: { ...s('One procurement order'), params: Params, response: { 200: ProcurementOrderSchema, ...errors } },
      config,
    },
    async (request) => getProcurementOrder(ctx, principalOf(request), request.params.id),
  );
  app.post(
    `${base}/orders/:id/send`,
    {
      schema: {
        ...s(
          'Send the quote request to the supplier',
          'Records `sentAt` and emits `procurement.order.sent`. 409 without a supplier or when already sent.',
        ),
        params: Params,
        response: { 200: ProcurementOrderSchema, ...errors },
      },
      config,
    },
    async (request) => {
      const principal = principalOf(request);
      return inTransaction(ctx, (trx, sink) => sendProcurementOrder(trx, sink, principal, request.params.id, 'api'));
    },
  );
  app.get(
    `${base}/orders/:id/quotes`,
    {
      schema: {
        ...s('Quotes of an order'),
        params: Params,
        response: { 200: Type.Object({ data: Type.Array(QuoteSchema) }), ...errors },
      },
      config,
    },
    async (request) => listQuotes(ctx, principalOf(request), request.params.id),
  );
  app.post(
    `${base}/orders/:id/quotes`,
    {
      schema: {
        ...s(
          'Record a supplier quote',
          'Moves the order to `quote_received`. `items` (1–100, each with name, quantity ≥ 1 and unitPrice) is required.',
        ),
        params: Params,
        body: QuoteInputSchema,
        response: { 201: QuoteSchema, ...errors },
      },
      config,
    },
    async (request, reply) => {
      const principal = principalOf(request);
      return reply
        .status(201)
        .send(await inTransaction(ctx, (trx) => addQuote(trx, principal, request.params.id, request.body)));
    },
  );
}
