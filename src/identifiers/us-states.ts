// US state and territory names → USPS/ANSI two-letter codes, for Meta's `st`.
export const US_STATE_CODES: Readonly<Record<string, string>> = {
  alabama: 'al', alaska: 'ak', arizona: 'az', arkansas: 'ar', california: 'ca',
  colorado: 'co', connecticut: 'ct', delaware: 'de', districtofcolumbia: 'dc', florida: 'fl',
  georgia: 'ga', hawaii: 'hi', idaho: 'id', illinois: 'il', indiana: 'in',
  iowa: 'ia', kansas: 'ks', kentucky: 'ky', louisiana: 'la', maine: 'me',
  maryland: 'md', massachusetts: 'ma', michigan: 'mi', minnesota: 'mn', mississippi: 'ms',
  missouri: 'mo', montana: 'mt', nebraska: 'ne', nevada: 'nv', newhampshire: 'nh',
  newjersey: 'nj', newmexico: 'nm', newyork: 'ny', northcarolina: 'nc', northdakota: 'nd',
  ohio: 'oh', oklahoma: 'ok', oregon: 'or', pennsylvania: 'pa', rhodeisland: 'ri',
  southcarolina: 'sc', southdakota: 'sd', tennessee: 'tn', texas: 'tx', utah: 'ut',
  vermont: 'vt', virginia: 'va', washington: 'wa', westvirginia: 'wv', wisconsin: 'wi',
  wyoming: 'wy', americansamoa: 'as', guam: 'gu', northernmarianaislands: 'mp',
  puertorico: 'pr', usvirginislands: 'vi', virginislands: 'vi',
};
