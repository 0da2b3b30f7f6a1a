// The words the calibration and challenge generators (generate.ts) draw from: plain lists,
// pairs written as "key:value,key:value", people, items, cities and topics. Data only.

export const pairsOf = (text: string) => text.split(',').map((p) => p.trim().split(':') as [string, string]);
export const WORDS = (
  'mississippi bookkeeper committee balloon banana assessment necessary parallel occurrence programming successful possession ' +
  'embarrass accommodate millennium referee coffee address tennessee hippopotamus abracadabra independence engineering pepper ' +
  'giraffe collaboration repetition syllabus vacuum letter mammal papaya yellow cinnamon tomorrow rhythm barrister'
).split(' ');
export const GOODS = pairsOf(
  'pencil:pencils,notebook:notebooks,eraser:erasers,ruler:rulers,marker:markers,stamp:stamps,envelope:envelopes,apple:apples,lemon:lemons,' +
    'candle:candles,bread roll:bread rolls,postcard:postcards',
);
export const DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
export const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
export const PAST = pairsOf(
  'go:went,see:saw,write:wrote,run:ran,take:took,bring:brought,buy:bought,catch:caught,teach:taught,think:thought,swim:swam,sing:sang,' +
    'drink:drank,begin:began,choose:chose,drive:drove,eat:ate,fall:fell,fly:flew,forget:forgot,give:gave,grow:grew,know:knew,ride:rode,' +
    'speak:spoke,steal:stole,throw:threw,wear:wore,break:broke,freeze:froze,hide:hid,shake:shook,sell:sold,tell:told,feel:felt,keep:kept,' +
    'sleep:slept,leave:left,lose:lost,meet:met,send:sent,spend:spent,build:built',
);
export const CAPITALS = pairsOf(
  'France:Paris,Japan:Tokyo,Canada:Ottawa,Australia:Canberra,Kenya:Nairobi,Norway:Oslo,Egypt:Cairo,Peru:Lima,Portugal:Lisbon,Poland:Warsaw,' +
    'Argentina:Buenos Aires,Chile:Santiago,Sweden:Stockholm,Finland:Helsinki,Greece:Athens,Ireland:Dublin,Austria:Vienna,Hungary:Budapest,' +
    'Thailand:Bangkok,Vietnam:Hanoi,Turkey:Ankara,Morocco:Rabat,Nigeria:Abuja,Ghana:Accra,Cuba:Havana,Spain:Madrid,Italy:Rome,' +
    'Germany:Berlin,Belgium:Brussels,Denmark:Copenhagen,New Zealand:Wellington,India:New Delhi,China:Beijing,South Korea:Seoul,Indonesia:Jakarta',
);
export const PLURALS = pairsOf(
  'child:children,mouse:mice,goose:geese,tooth:teeth,foot:feet,man:men,woman:women,person:people,ox:oxen,cactus:cacti,crisis:crises,' +
    'analysis:analyses,phenomenon:phenomena,criterion:criteria,knife:knives,leaf:leaves,wolf:wolves,half:halves,life:lives,thesis:theses,' +
    'fungus:fungi,nucleus:nuclei,sheep:sheep,deer:deer',
);
export const ELEMENTS = pairsOf(
  'gold:Au,iron:Fe,sodium:Na,potassium:K,silver:Ag,copper:Cu,lead:Pb,tin:Sn,mercury:Hg,helium:He,oxygen:O,nitrogen:N,carbon:C,hydrogen:H,' +
    'calcium:Ca,chlorine:Cl,neon:Ne,zinc:Zn,sulfur:S,magnesium:Mg',
);
export const OPPOSITES = pairsOf(
  'hot:cold,early:late,heavy:light,empty:full,wet:dry,thick:thin,rough:smooth,loud:quiet,cheap:expensive,ancient:modern,victory:defeat,' +
    'arrive:depart,accept:reject,increase:decrease,maximum:minimum,inside:outside,above:below,always:never,buy:sell,win:lose',
);
export const PEOPLE = [
  'Priya Nair',
  'Tomasz Kowalski',
  'Amara Okafor',
  'Lukas Berg',
  'Mei Tanaka',
  'Diego Alvarez',
  'Sofia Rossi',
  'Jonas Weber',
  'Aisha Khan',
  'Mateo Silva',
  'Hannah Schmidt',
  'Kwame Mensah',
  'Yuki Sato',
  'Elena Petrova',
  'Omar Haddad',
  'Ravi Patel',
  'Ingrid Larsen',
  'Lucas Dubois',
  'Zara Ahmed',
  'Nina Horvat',
];
export const CURRENCIES = pairsOf('euros:EUR,US dollars:USD,British pounds:GBP,Japanese yen:JPY,Swiss francs:CHF,Canadian dollars:CAD,Swedish kronor:SEK');
export const ITEMS = [
  'used bicycle',
  'second-hand piano',
  'set of garden chairs',
  'laptop repair',
  'week of tutoring',
  'wedding cake',
  'kayak',
  'painting',
  'vintage lamp',
  'sewing machine',
];
export const CITIES = [
  'Lisbon',
  'Osaka',
  'Nairobi',
  'Toronto',
  'Krakow',
  'Bergen',
  'Valencia',
  'Leeds',
  'Porto',
  'Adelaide',
  'Lyon',
  'Gdansk',
  'Malmo',
  'Cork',
  'Graz',
];
export const TOPICS = ['quarterly budget', 'hiring plan', 'security audit', 'product roadmap', 'office move', 'supplier contract', 'release schedule'];
