// Imported first by shared/schemas.ts, before any schema is built: zod reads this setting when a
// schema is constructed, not when it parses.
//
// jitless: zod would otherwise compile each object schema into a parser with `new Function` on
// its first parse. Our processes parse each file a handful of times (a CLI run parses its config,
// job and plan once), so compiling costs more than it saves: the first parse of a job and its
// config took 14–18 ms with it and 6–9 ms without. It also keeps zod from probing for eval in
// the renderer, whose content security policy refuses it.
import { config } from 'zod';

config({ jitless: true });
