/**
 * The evidence subcommands (issue 5): identities, sign-offs, verification, incident notes,
 * archives. One registration, so commands/index.ts lists them in one line.
 */
import { Option, type Command } from 'commander';
import { archiveCommand, exportCommand, importCommand, type ExportOptions } from '../evidence/exportCommand.ts';
import { createIdentity, exportPublic, listIdentities, registerIdentity, type IdentityOptions } from '../evidence/identityCommand.ts';
import { importSignoff, listSignoffs, sign, signoffRequest, type RequestOptions, type SignOptions } from '../evidence/signoffCommand.ts';
import { ledgerPath } from '../evidence/keyring.ts';
import { verifyCommand, verifyDbCommand } from '../evidence/verifyCommand.ts';
import { withGlobals, type CliContext, type GlobalOptions } from '../program.ts';

const collect = (value: string, previous: string[] = []) => [...previous, value];
const keyOptions = (cmd: Command) =>
  cmd
    .option('--key-file <file>', 'the private key file (default: keys/<name>.key beside the database, or $BACKFILL_RUNBOOK_KEYS)')
    .option('--passphrase-env <var>', 'take the passphrase from this environment variable instead of a prompt');

export function registerEvidence(program: Command, ctx: CliContext): void {
  const identity = program
    .command('identity')
    .description('operator and lead identities: Ed25519 keys, public keys registered as trusted signers');
  keyOptions(
    withGlobals(identity.command('create').description('create a key pair; keep the private key encrypted, register the public key')),
  )
    .requiredOption('--name <name>', 'identity name, e.g. alice')
    .addOption(new Option('--role <role>', 'operator or lead').choices(['operator', 'lead']).makeOptionMandatory())
    .option('--operator <name>', 'who registers it (default: you)')
    .action(async (opts: IdentityOptions & GlobalOptions) => ctx.withStore((store, out) => createIdentity(opts, store, out), opts));
  withGlobals(identity.command('list').description('registered identities')).action(async (opts: GlobalOptions) =>
    ctx.withStore((store, out) => listIdentities(store, out), opts),
  );
  withGlobals(identity.command('export-public').description("print an identity's public key (PEM)"))
    .requiredOption('--name <name>', 'identity name')
    .option('--out <file>', 'write to a file instead of stdout')
    .action(async (opts: { name: string; out?: string } & GlobalOptions) => ctx.withStore((store) => exportPublic(opts, store), opts));
  withGlobals(identity.command('register').description("register another person's public key as a trusted signer"))
    .requiredOption('--name <name>', 'identity name')
    .addOption(new Option('--role <role>', 'operator or lead').choices(['operator', 'lead']).makeOptionMandatory())
    .requiredOption('--public-key <file>', 'their public key (PEM), from `identity export-public`')
    .option('--operator <name>', 'who registers it (default: you)')
    .action(async (opts: { name: string; role: string; publicKey: string; operator?: string } & GlobalOptions) =>
      ctx.withStore((store, out) => registerIdentity(opts, store, out), opts),
    );

  const signoff = program.command('signoff').description("a lead's sign-off of a plan: request, import, list");
  withGlobals(
    signoff.command('request').description('write a sign-off request: the plan, its job and its dry-run evidence, with their hashes'),
  )
    .option('--run-id <id>', 'the run (request id) whose plan to sign; a dry run saves the plan')
    .option('--plan <file>', 'a saved plan file (its dry run must be on record)')
    .option('--plan-hash <hash>', 'a plan on record, by hash')
    .option('--jobs <dir>', 'folder of job files (default: <workspace>/jobs)')
    .option('--operator <name>', 'who asks (default: you)')
    .option('--out <file>', 'write to a file instead of stdout')
    .action(async (opts: RequestOptions & GlobalOptions) => ctx.withStore((store) => signoffRequest(opts, store), opts));
  withGlobals(signoff.command('import <signature>').description('record a signature file returned by a lead'))
    .option('--operator <name>', 'who imports it (default: you)')
    .action(async (file: string, opts: { operator?: string } & GlobalOptions) =>
      ctx.withStore((store, out) => importSignoff(file, opts, store, out), opts),
    );
  withGlobals(signoff.command('list').description('sign-offs on record'))
    .option('--run-id <id>', 'only those of this request id')
    .action(async (opts: { runId?: string } & GlobalOptions) => ctx.withStore((store, out) => listSignoffs(opts, store, out), opts));

  keyOptions(
    withGlobals(
      program.command('sign <request>').description('check a sign-off request and sign it with your key (prints the signature file)'),
    ),
  )
    .option('--identity <name>', 'your identity (default: the one in --key-file)')
    .option('--comment <text>', 'your comment, signed with the plan')
    .option('--out <file>', 'write to a file instead of stdout')
    .action(async (file: string, opts: SignOptions & GlobalOptions) => ctx.act(() => sign(file, opts), opts));

  withGlobals(
    program.command('verify [file]').description('verify a note bundle or run archive (no database needed), or the database of --db'),
  )
    .option(
      '--trust <key.pem>',
      "trust only this signer's public key (default: the identities registered here); repeat for several",
      collect,
    )
    .action(async (file: string | undefined, opts: { trust?: string[] } & GlobalOptions) =>
      // The database is read, never opened as a store: verifying must not migrate or create it.
      ctx.act(
        (out) => (file === undefined ? verifyDbCommand(ledgerPath(opts), out) : verifyCommand(file, opts, () => ledgerPath(opts), out)),
        opts,
      ),
    );

  keyOptions(withGlobals(program.command('export').description('export the incident note of a run')))
    .requiredOption('--run-id <id>', 'the run')
    .addOption(
      new Option('--format <format>', 'md for a ticket, html to print to PDF, json to verify')
        .choices(['md', 'html', 'json'])
        .default('md'),
    )
    .option('--out <file>', 'write to a file instead of stdout')
    .option('--identity <name>', 'sign the chain head with this key (a checkpoint)')
    .option('--operator <name>', 'who exports (default: you)')
    .action(async (opts: ExportOptions & GlobalOptions) => ctx.withStore((store) => exportCommand(opts, store), opts));
  keyOptions(withGlobals(program.command('archive').description('write one file with everything about a run, to review it elsewhere')))
    .requiredOption('--run-id <id>', 'the run')
    .requiredOption('--out <file>', 'the archive to write, e.g. run.bfr')
    .option('--identity <name>', 'sign the chain head with this key (a checkpoint)')
    .option('--operator <name>', 'who archives (default: you)')
    .action(async (opts: Omit<ExportOptions, 'format'> & { out: string } & GlobalOptions) =>
      ctx.withStore((store, out) => archiveCommand(opts, store, out), opts),
    );
  withGlobals(program.command('import <archive>').description('verify a run archive and bring the run into this database for review'))
    .option(
      '--trust <key.pem>',
      "trust only this signer's public key (default: the identities registered here); repeat for several",
      collect,
    )
    .option('--operator <name>', 'who imports (default: you)')
    .action(async (file: string, opts: { trust?: string[]; operator?: string } & GlobalOptions) =>
      ctx.withStore((store, out) => importCommand(file, opts, store, out), opts),
    );
}
