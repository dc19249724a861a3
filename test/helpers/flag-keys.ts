// The keys a boolean flag's representation has, in order (spec: Flag representation): typed variants
// add fields only to a flag that has them, so every test of "answers as before" pins these lists.
export const kFlatFlagKeys = [
  'id',
  'name',
  'kind',
  'description',
  'tags',
  'updatedAt',
  'lastEvaluatedAt',
  'evaluations',
  'enabled',
  'trafficPercentage',
  'cohorts',
  'audienceId',
] as const;

/** One environment of a group flag in environments form. */
export const kEnvironmentEntryKeys = ['enabled', 'trafficPercentage', 'cohorts', 'audienceId', 'updatedAt'] as const;
