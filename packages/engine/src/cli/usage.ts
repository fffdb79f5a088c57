// The engine's `keel` usage lines, apart from the commands so that `keel help` reads them without loading the engine.

export const ENGINE_USAGE = `engine bootstrap [--json]        create a merchant, a sub-merchant, stores and one key per scope; print ids and keys
  engine merchants create --name NAME [--parent MERCHANT_ID] [--json]
  engine merchants activate|deactivate MERCHANT_ID
  engine stores create --merchant MERCHANT_ID --name NAME [--json]
  engine keys create --merchant ID --scope merchant|store|merchant_network|custom [--store ID…] [--name N] [--expires ISO] [--json]
  engine keys list --merchant ID [--json]
  engine keys revoke --merchant ID KEY_ID…   revoke the keys not revoked yet
  engine keys delete --merchant ID KEY_ID…   delete keys, only when every one is revoked
  engine realms link --realm REALM_ID --merchant MERCHANT_ID [--json]
                               link a runtime realm to a catalog merchant (its flows call that merchant's catalog
                               tools; its catalog records anonymous events in the realm); one merchant per realm
  engine realms unlink --realm REALM_ID      remove the realm's link
  engine realms show --realm REALM_ID [--json]
  engine flows install shopping-assistant [--provider-url URL --model NAME [--api-key-env VAR]] [--demo-products] [--json]
                               install the example shopping assistant (flow, fixtures, agent, prompt, provider) into the
                               realm of --access-key/--secret-key (or ENGINE_ACCESS_KEY/ENGINE_SECRET_KEY); without
                               --provider-url it runs on a scripted local model
  engine flows run shopping-assistant --message TEXT [--quantity N] [--approve|--deny] [--timeout S] [--json]
                               run it end to end in this process and print the execution's steps as they happen
  engine flows approve EXECUTION_ID [--approval APPROVAL_ID] [--deny] [--reason TEXT] [--timeout S] [--json]
                               approve (or deny) the approval a waiting execution waits for (the only pending one
                               without --approval), then continue it in this process and print its steps`;

export const IMPORT_USAGE = `import products FILE.(csv|jsonl) --merchant MERCHANT_ID [--store STORE_ID] [--json]
                               bulk upsert products (by storeId + sku/externalId) through the catalog service;
                               a progress bar on stderr, a summary of created/updated/rejected rows; exit 1 when any row is rejected`;
