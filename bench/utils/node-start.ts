/**
 * The environment of the children whose start is timed (`cli`, the hook of `adapters`).
 *
 * NODE_EXTRA_CA_CERTS is left out of it. Node 20 reads and parses that certificate file at every
 * start, before any code runs (Node 22 and later only when a TLS connection first needs it): 30 to
 * 40 ms on the bench machines, which set it for their network. Neither aura's commands nor Python
 * Aura read it, and a user's Node 20 has it only if they set it. Where it is set, each scenario
 * also times aura with it and prints that figure beside the others.
 */

/** The certificate file the bench's own environment names, if any. */
export const EXTRA_CA_CERTS: string | undefined = process.env['NODE_EXTRA_CA_CERTS'] || undefined;

/** `env` without NODE_EXTRA_CA_CERTS. */
export function withoutExtraCaCerts(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const rest = { ...env };
  delete rest['NODE_EXTRA_CA_CERTS'];
  return rest;
}

/** The line a scenario prints about it. */
export function extraCaCertsNote(): string {
  return EXTRA_CA_CERTS === undefined
    ? 'NODE_EXTRA_CA_CERTS is not set'
    : `NODE_EXTRA_CA_CERTS is set here: the processes timed start without it (Node ${process.versions.node.split('.')[0]} parses it at every start${Number(process.versions.node.split('.')[0]) >= 22 ? ', or would on Node 20' : ''}); aura with it is timed too`;
}
