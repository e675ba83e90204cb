// The sleep-wake plugin: agents (solo and squad members) sleep and wake by their lifecycle.

import { ASLEEP } from '../../pkg/api/agent.js';
import type { Plugin } from '../../pkg/plugin/types.js';
import { SleepWake } from './sleep-wake.js';

const plugin: Plugin = {
  name: 'sleep-wake',
  // The core reads the Asleep condition this plugin owns (pkg/plugin/loader.ts, CORE_NEEDS).
  provides: [`condition/${ASLEEP}`],
  setup(ctx) {
    const sw = new SleepWake(ctx, ctx.logger.child({ plugin: 'sleep-wake' }));
    ctx.admission.register(sw.autoDeleteAdmission);
  },
};

export default plugin;
