// geo's `keel` usage lines, apart from the commands so that `keel help` reads them without loading geo.

export const MEASURE_USAGE = `keel geo prompts import --workspace ID [--project ID] --file prompts.csv [--json]
                               tracked prompts from CSV: a header naming text (or prompt), optional topic, locale,
                               intent, persona; importing a prompt again updates it
keel geo run --workspace ID [--project ID] [--engine ID]… [--judge ID] [--samples N] [--seed N] [--resume RUN_ID] [--json]
                               asks every tracked prompt of every engine (or those named) N times with a progress
                               bar, then prints the metrics with their 95% intervals; --judge rates subjective impression;
                               --resume finishes a stopped run`;

export const GEO_USAGE = `keel geo bootstrap [--json] [--name NAME]
                               new tenant, two workspaces, read/write/signals/admin keys and a site token
keel geo tenant create --name NAME [--json]
keel geo workspace create --tenant ID --name NAME [--timezone ZONE] [--json]
keel geo key create --tenant ID --name NAME --permissions P[,P…] [--workspace ID]… [--expires-in-days N] [--json]
                               no --workspace: tenant scope; one: workspace scope; several: a custom set
keel geo site-token create --tenant ID --workspace ID [--name NAME] [--json]
${MEASURE_USAGE}`;
